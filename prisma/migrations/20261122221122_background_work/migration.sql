-- AlterTable
ALTER TABLE "artifacts" ADD COLUMN     "backgroundWorkId" TEXT,
ADD COLUMN     "idempotencyKey" TEXT,
ADD COLUMN     "ownerMemberId" TEXT,
ADD COLUMN     "title" TEXT NOT NULL DEFAULT '';

-- CreateTable
CREATE TABLE "background_work" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "requesterMemberId" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "goal" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "stepContext" JSONB NOT NULL DEFAULT '{}',
    "maxSteps" INTEGER,
    "maxCostUsd" DOUBLE PRECISION,
    "deadlineAt" TIMESTAMP(3),
    "stepsDone" INTEGER NOT NULL DEFAULT 0,
    "costUsd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "runSeq" INTEGER NOT NULL DEFAULT 0,
    "pendingActionId" TEXT,
    "reasonCode" TEXT,
    "reason" TEXT,
    "originKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "background_work_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "background_work_originKey_key" ON "background_work"("originKey");

-- CreateIndex
CREATE INDEX "background_work_orgId_requesterMemberId_status_idx" ON "background_work"("orgId", "requesterMemberId", "status");

-- CreateIndex
CREATE UNIQUE INDEX "artifacts_idempotencyKey_key" ON "artifacts"("idempotencyKey");

-- CreateIndex
CREATE INDEX "artifacts_backgroundWorkId_idx" ON "artifacts"("backgroundWorkId");
