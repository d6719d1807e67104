-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "organizations" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'Asia/Tokyo',
    "values" TEXT NOT NULL DEFAULT '',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "organizations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "departments" (
    "orgId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "parentId" TEXT,

    CONSTRAINT "departments_pkey" PRIMARY KEY ("orgId","id")
);

-- CreateTable
CREATE TABLE "members" (
    "orgId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "aliases" TEXT[],
    "level" INTEGER NOT NULL,
    "departmentId" TEXT,
    "title" TEXT,
    "preferences" JSONB NOT NULL DEFAULT '{}',
    "noticesOptOut" BOOLEAN NOT NULL DEFAULT false,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "members_pkey" PRIMARY KEY ("orgId","id")
);

-- CreateTable
CREATE TABLE "platform_accounts" (
    "platform" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "memberId" TEXT NOT NULL,

    CONSTRAINT "platform_accounts_pkey" PRIMARY KEY ("platform","accountId")
);

-- CreateTable
CREATE TABLE "rooms" (
    "platform" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "authority" TEXT NOT NULL DEFAULT 'member',
    "noticesEnabled" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "rooms_pkey" PRIMARY KEY ("platform","externalId")
);

-- CreateTable
CREATE TABLE "policies" (
    "orgId" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "rule" JSONB,
    "priority" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "policies_pkey" PRIMARY KEY ("orgId","id")
);

-- CreateTable
CREATE TABLE "conversation_messages" (
    "id" BIGSERIAL NOT NULL,
    "orgId" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "platformMessageId" TEXT,
    "options" JSONB,
    "turnId" TEXT,
    "sentAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "conversation_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "conversation_summaries" (
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "coversUpToId" BIGINT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "conversation_summaries_pkey" PRIMARY KEY ("platform","roomId","accountId")
);

-- CreateTable
CREATE TABLE "conversation_states" (
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "mode" TEXT NOT NULL DEFAULT 'NORMAL',
    "pendingActionId" TEXT,
    "lastIntent" TEXT,
    "lastTool" TEXT,
    "lastError" TEXT,
    "errorCount" INTEGER NOT NULL DEFAULT 0,
    "clarificationRounds" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "conversation_states_pkey" PRIMARY KEY ("platform","roomId","accountId")
);

-- CreateTable
CREATE TABLE "pending_actions" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "memberId" TEXT,
    "turnId" TEXT,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "proposal" JSONB NOT NULL,
    "question" TEXT NOT NULL,
    "confirmationType" TEXT NOT NULL DEFAULT 'single',
    "confirmationsGiven" INTEGER NOT NULL DEFAULT 0,
    "originalMessage" TEXT NOT NULL,
    "reasoning" TEXT NOT NULL,
    "confidence" DOUBLE PRECISION NOT NULL,
    "reasonCode" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "decidedAt" TIMESTAMP(3),
    "executedAt" TIMESTAMP(3),
    "result" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "pending_actions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "work_items" (
    "id" BIGSERIAL NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'queued',
    "orderingKey" TEXT NOT NULL,
    "claimedBy" TEXT,
    "claimExpiresAt" TIMESTAMP(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "maxAttempts" INTEGER NOT NULL DEFAULT 3,
    "runAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dedupeKey" TEXT NOT NULL,
    "lastError" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "work_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbound_messages" (
    "id" TEXT NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'sending',
    "platformMessageId" TEXT,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sentAt" TIMESTAMP(3),

    CONSTRAINT "outbound_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "artifacts" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "workItemId" BIGINT,
    "mediaType" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "artifacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "turn_records" (
    "id" TEXT NOT NULL,
    "orgId" TEXT,
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "memberId" TEXT,
    "workItemId" BIGINT,
    "kind" TEXT NOT NULL DEFAULT 'user_request',
    "inputRedacted" TEXT,
    "contextSummary" JSONB NOT NULL DEFAULT '{}',
    "model" TEXT,
    "outputType" TEXT,
    "reasoning" JSONB,
    "confidence" JSONB,
    "proposals" JSONB NOT NULL DEFAULT '[]',
    "guardianAction" TEXT,
    "guardianReason" TEXT,
    "authResult" TEXT,
    "authReason" TEXT,
    "execution" JSONB,
    "finalReply" TEXT,
    "decision" TEXT NOT NULL,
    "reasonCode" TEXT NOT NULL,
    "finalDecider" TEXT NOT NULL,
    "sealed" BOOLEAN NOT NULL DEFAULT true,
    "overrideable" BOOLEAN NOT NULL DEFAULT false,
    "errorId" TEXT,
    "errorCategory" TEXT,
    "totalMs" INTEGER NOT NULL,
    "llmMs" INTEGER NOT NULL DEFAULT 0,
    "toolsMs" INTEGER NOT NULL DEFAULT 0,
    "inputTokens" INTEGER NOT NULL DEFAULT 0,
    "outputTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheWriteTokens" INTEGER NOT NULL DEFAULT 0,
    "cacheReadTokens" INTEGER NOT NULL DEFAULT 0,
    "costUsd" DECIMAL(12,6) NOT NULL DEFAULT 0,
    "selfCritique" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "turn_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "llm_usage" (
    "id" BIGSERIAL NOT NULL,
    "turnId" TEXT,
    "orgId" TEXT,
    "model" TEXT NOT NULL,
    "purpose" TEXT NOT NULL DEFAULT 'turn',
    "inputTokens" INTEGER NOT NULL,
    "outputTokens" INTEGER NOT NULL,
    "cacheWriteTokens" INTEGER NOT NULL,
    "cacheReadTokens" INTEGER NOT NULL,
    "costUsd" DECIMAL(12,6) NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "requestId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "llm_usage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tasks" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "platform" TEXT,
    "roomId" TEXT,
    "title" TEXT NOT NULL,
    "assigneeMemberId" TEXT NOT NULL,
    "createdByMemberId" TEXT,
    "dueAt" TIMESTAMP(3),
    "status" TEXT NOT NULL DEFAULT 'open',
    "goalId" TEXT,
    "chatworkTaskId" TEXT,
    "idempotencyKey" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completedAt" TIMESTAMP(3),

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "memories" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "subjectMemberId" TEXT,
    "content" TEXT NOT NULL,
    "createdByMemberId" TEXT,
    "roomId" TEXT,
    "idempotencyKey" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "memories_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "goals" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "memberId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "targetDate" TIMESTAMP(3),
    "status" TEXT NOT NULL DEFAULT 'active',
    "progressNote" TEXT NOT NULL DEFAULT '',
    "idempotencyKey" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "goals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reminders" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "platform" TEXT NOT NULL,
    "roomId" TEXT NOT NULL,
    "memberId" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "remindAt" TIMESTAMP(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'scheduled',
    "idempotencyKey" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reminders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "knowledge_documents" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "knowledge_documents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "schedules" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "cron" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'Asia/Tokyo',
    "platform" TEXT,
    "roomId" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "lastFiredAt" TIMESTAMP(3),

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "schedule_runs" (
    "fireKey" TEXT NOT NULL,
    "scheduleId" TEXT NOT NULL,
    "firedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "schedule_runs_pkey" PRIMARY KEY ("fireKey")
);

-- CreateIndex
CREATE INDEX "platform_accounts_orgId_memberId_idx" ON "platform_accounts"("orgId", "memberId");

-- CreateIndex
CREATE INDEX "conversation_messages_platform_roomId_accountId_id_idx" ON "conversation_messages"("platform", "roomId", "accountId", "id");

-- CreateIndex
CREATE INDEX "conversation_messages_createdAt_idx" ON "conversation_messages"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "conversation_messages_platform_roomId_role_platformMessageI_key" ON "conversation_messages"("platform", "roomId", "role", "platformMessageId");

-- CreateIndex
CREATE INDEX "pending_actions_platform_roomId_accountId_status_idx" ON "pending_actions"("platform", "roomId", "accountId", "status");

-- CreateIndex
CREATE UNIQUE INDEX "work_items_dedupeKey_key" ON "work_items"("dedupeKey");

-- CreateIndex
CREATE INDEX "work_items_state_runAt_idx" ON "work_items"("state", "runAt");

-- CreateIndex
CREATE INDEX "work_items_orderingKey_id_idx" ON "work_items"("orderingKey", "id");

-- CreateIndex
CREATE UNIQUE INDEX "outbound_messages_dedupeKey_key" ON "outbound_messages"("dedupeKey");

-- CreateIndex
CREATE INDEX "turn_records_createdAt_idx" ON "turn_records"("createdAt");

-- CreateIndex
CREATE INDEX "turn_records_orgId_createdAt_idx" ON "turn_records"("orgId", "createdAt");

-- CreateIndex
CREATE INDEX "turn_records_reasonCode_idx" ON "turn_records"("reasonCode");

-- CreateIndex
CREATE INDEX "llm_usage_createdAt_idx" ON "llm_usage"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "tasks_idempotencyKey_key" ON "tasks"("idempotencyKey");

-- CreateIndex
CREATE INDEX "tasks_orgId_assigneeMemberId_status_idx" ON "tasks"("orgId", "assigneeMemberId", "status");

-- CreateIndex
CREATE INDEX "tasks_orgId_status_dueAt_idx" ON "tasks"("orgId", "status", "dueAt");

-- CreateIndex
CREATE UNIQUE INDEX "memories_idempotencyKey_key" ON "memories"("idempotencyKey");

-- CreateIndex
CREATE INDEX "memories_orgId_subjectMemberId_idx" ON "memories"("orgId", "subjectMemberId");

-- CreateIndex
CREATE UNIQUE INDEX "goals_idempotencyKey_key" ON "goals"("idempotencyKey");

-- CreateIndex
CREATE INDEX "goals_orgId_memberId_status_idx" ON "goals"("orgId", "memberId", "status");

-- CreateIndex
CREATE UNIQUE INDEX "reminders_idempotencyKey_key" ON "reminders"("idempotencyKey");

-- CreateIndex
CREATE INDEX "reminders_status_remindAt_idx" ON "reminders"("status", "remindAt");

-- CreateIndex
CREATE INDEX "knowledge_documents_orgId_idx" ON "knowledge_documents"("orgId");

-- AddForeignKey
ALTER TABLE "departments" ADD CONSTRAINT "departments_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "members" ADD CONSTRAINT "members_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "platform_accounts" ADD CONSTRAINT "platform_accounts_orgId_memberId_fkey" FOREIGN KEY ("orgId", "memberId") REFERENCES "members"("orgId", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rooms" ADD CONSTRAINT "rooms_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "policies" ADD CONSTRAINT "policies_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
