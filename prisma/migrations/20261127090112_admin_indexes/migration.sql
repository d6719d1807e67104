-- CreateIndex
CREATE INDEX "turn_records_memberId_createdAt_idx" ON "turn_records"("memberId", "createdAt");

-- CreateIndex
CREATE INDEX "turn_records_roomId_createdAt_idx" ON "turn_records"("roomId", "createdAt");

-- CreateIndex
CREATE INDEX "llm_usage_turnId_idx" ON "llm_usage"("turnId");
