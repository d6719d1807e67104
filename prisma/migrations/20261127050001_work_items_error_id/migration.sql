-- AlterTable
ALTER TABLE "work_items" ADD COLUMN     "errorId" TEXT;

-- /admin lists the items that gave up, newest first. A partial index: only failed rows are written to it, so the
-- claims and completions of the hot path do not pay for it.
CREATE INDEX "work_items_failed_idx" ON "work_items" ("finishedAt" DESC) WHERE state = 'failed';
