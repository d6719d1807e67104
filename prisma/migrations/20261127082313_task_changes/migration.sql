-- CreateTable
CREATE TABLE "task_changes" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "taskId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "byMemberId" TEXT,
    "before" JSONB NOT NULL,
    "after" JSONB NOT NULL,
    "chatwork" TEXT NOT NULL DEFAULT 'pending',
    "oldChatworkTaskId" TEXT,
    "newChatworkTaskId" TEXT,
    "idempotencyKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "task_changes_idempotencyKey_key" ON "task_changes"("idempotencyKey");

-- CreateIndex
CREATE INDEX "task_changes_orgId_taskId_idx" ON "task_changes"("orgId", "taskId");

-- AddForeignKey
ALTER TABLE "task_changes" ADD CONSTRAINT "task_changes_taskId_fkey" FOREIGN KEY ("taskId") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
