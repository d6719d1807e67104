-- Every turn's context counts the tasks of the sender's active goals (src/context/sources/goals.source.ts), one goal
-- at a time: without this index each count read every task of the organisation.
-- CreateIndex
CREATE INDEX "tasks_orgId_goalId_idx" ON "tasks"("orgId", "goalId");
