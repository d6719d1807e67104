-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "discordGuildIds" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "departments" ADD COLUMN     "topSecret" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "pending_actions" ADD COLUMN     "redactedAt" TIMESTAMP(3),
ADD COLUMN     "redactedCopy" JSONB;

-- CreateIndex
CREATE INDEX "turn_records_platform_accountId_createdAt_idx" ON "turn_records"("platform", "accountId", "createdAt");

-- Pending actions keep no raw text once decided (issue 8, R-O2): the redacted copies written at creation
-- replace the raw proposal, message, question and reasoning when the status becomes final. Without a
-- copy (a row written by older code) the parameters are dropped and the texts emptied (fail-closed).
CREATE OR REPLACE FUNCTION "hisho_redact_decided_pending"() RETURNS trigger AS $$
BEGIN
  NEW."proposal" := COALESCE(NEW."redactedCopy"->'proposal',
    jsonb_build_object('id', NEW."proposal"->'id', 'toolName', NEW."proposal"->'toolName', 'parameters', '{}'::jsonb));
  NEW."originalMessage" := COALESCE(NEW."redactedCopy"->>'originalMessage', '');
  NEW."question" := COALESCE(NEW."redactedCopy"->>'question', '');
  NEW."reasoning" := COALESCE(NEW."redactedCopy"->>'reasoning', '');
  NEW."redactedCopy" := NULL;
  NEW."redactedAt" := now();
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER "pending_actions_redact_decided"
  BEFORE UPDATE OF "status" ON "pending_actions"
  FOR EACH ROW
  WHEN (NEW."status" IN ('executed', 'failed', 'cancelled', 'expired') AND NEW."redactedAt" IS NULL)
  EXECUTE FUNCTION "hisho_redact_decided_pending"();
