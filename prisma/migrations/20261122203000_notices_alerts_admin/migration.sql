-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "quietHours" TEXT;

-- AlterTable
ALTER TABLE "members" ADD COLUMN     "quietHours" TEXT;

-- AlterTable
ALTER TABLE "rooms" ADD COLUMN     "adminAlerts" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "schedules" ADD COLUMN     "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "schedule_runs" ADD COLUMN     "firedBy" TEXT,
ADD COLUMN     "period" TIMESTAMP(3),
ADD COLUMN     "recipients" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "skipped" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'fired';

-- CreateTable
CREATE TABLE "notice_preferences" (
    "orgId" TEXT NOT NULL,
    "memberId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "notice_preferences_pkey" PRIMARY KEY ("orgId","memberId","kind")
);

-- CreateTable
CREATE TABLE "admin_alerts" (
    "id" BIGSERIAL NOT NULL,
    "kind" TEXT NOT NULL,
    "windowKey" TEXT NOT NULL,
    "severity" TEXT NOT NULL DEFAULT 'warn',
    "facts" JSONB NOT NULL DEFAULT '{}',
    "repeats" INTEGER NOT NULL DEFAULT 0,
    "firedBy" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "admin_alerts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "admin_alerts_createdAt_idx" ON "admin_alerts"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "admin_alerts_kind_windowKey_key" ON "admin_alerts"("kind", "windowKey");

-- CreateIndex
CREATE INDEX "schedule_runs_scheduleId_period_idx" ON "schedule_runs"("scheduleId", "period");
