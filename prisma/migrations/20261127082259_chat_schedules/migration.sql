-- AlterTable
ALTER TABLE "reminders" ADD COLUMN     "audience" TEXT NOT NULL DEFAULT 'member',
ADD COLUMN     "departmentId" TEXT,
ADD COLUMN     "quietPolicy" TEXT NOT NULL DEFAULT 'deliver',
ADD COLUMN     "scheduleId" TEXT,
ADD COLUMN     "snoozedFromId" TEXT;

-- AlterTable
ALTER TABLE "schedules" ADD COLUMN     "cancelledAt" TIMESTAMP(3),
ADD COLUMN     "catchUp" TEXT NOT NULL DEFAULT 'once',
ADD COLUMN     "departmentId" TEXT,
ADD COLUMN     "idempotencyKey" TEXT,
ADD COLUMN     "nextRunAt" TIMESTAMP(3),
ADD COLUMN     "ownerMemberId" TEXT,
ADD COLUMN     "quietPolicy" TEXT NOT NULL DEFAULT 'deliver',
ADD COLUMN     "rule" JSONB,
ADD COLUMN     "source" TEXT NOT NULL DEFAULT 'directory',
ADD COLUMN     "targetMemberId" TEXT,
ADD COLUMN     "text" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "schedules_idempotencyKey_key" ON "schedules"("idempotencyKey");

-- CreateIndex
CREATE INDEX "schedules_source_nextRunAt_idx" ON "schedules"("source", "nextRunAt");
