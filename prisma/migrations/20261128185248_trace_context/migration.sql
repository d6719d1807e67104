-- Tracing (issue 43). A work item keeps the span that stored it (the webhook's) as a W3C traceparent, so the turn's
-- spans join the webhook's trace; a pending action keeps the asking turn's, so the answer's turn links to it. Both
-- are NULL when tracing is off.
-- AlterTable
ALTER TABLE "pending_actions" ADD COLUMN     "traceContext" TEXT;

-- AlterTable
ALTER TABLE "work_items" ADD COLUMN     "traceContext" TEXT;

-- open_pending_action stores the new column too: the body of migration 20261127092333_restore_open_pending_action_function
-- with "traceContext" in the INSERT (decision record docs/decisions/0005-open-pending-action.md; its only caller is
-- src/confirmations/pending-actions.ts).
CREATE OR REPLACE FUNCTION open_pending_action(p_lock text, p_row jsonb, p_now timestamp(3), p_session_expires timestamp(3))
RETURNS SETOF pending_actions
LANGUAGE plpgsql
AS $fn$
DECLARE
  n pending_actions := jsonb_populate_record(NULL::pending_actions, p_row);
  session_expired boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(p_lock));
  SELECT s."expiresAt" < p_now INTO session_expired
    FROM conversation_states s
   WHERE s.platform = n.platform AND s."roomId" = n."roomId" AND s."accountId" = n."accountId";
  session_expired := coalesce(session_expired, false);

  UPDATE pending_actions p
     SET status = CASE WHEN p."expiresAt" <= p_now OR session_expired THEN 'expired' ELSE 'cancelled' END,
         "decidedAt" = p_now,
         result = CASE WHEN p."expiresAt" <= p_now OR session_expired THEN p.result
                  ELSE jsonb_build_object('cancelReason', 'superseded', 'supersededBy', n.id) END
   WHERE p.platform = n.platform AND p."roomId" = n."roomId" AND p."accountId" = n."accountId"
     AND p.status = 'pending';

  RETURN QUERY
  INSERT INTO pending_actions (id, "orgId", platform, "roomId", "accountId", "memberId", "turnId", status, proposal,
                               question, "confirmationType", "originalMessage", reasoning, confidence, "questionKey",
                               "reasonCode", "expiresAt", "redactedCopy", "traceContext")
  VALUES (n.id, n."orgId", n.platform, n."roomId", n."accountId", n."memberId", n."turnId", 'pending', n.proposal,
          n.question, n."confirmationType", n."originalMessage", n.reasoning, n.confidence, n."questionKey",
          n."reasonCode", n."expiresAt", n."redactedCopy", n."traceContext")
  RETURNING *;

  INSERT INTO conversation_states AS s (platform, "roomId", "accountId", mode, "pendingActionId", "expiresAt",
                                        "updatedAt")
  VALUES (n.platform, n."roomId", n."accountId", 'CONFIRMATION_PENDING', n.id, p_session_expires, now())
  ON CONFLICT (platform, "roomId", "accountId") DO UPDATE
     SET mode = 'CONFIRMATION_PENDING', "pendingActionId" = n.id, "expiresAt" = p_session_expires,
         "updatedAt" = now(),
         "clarificationRounds" = CASE WHEN session_expired THEN 0 ELSE s."clarificationRounds" END,
         "errorCount" = CASE WHEN session_expired THEN 0 ELSE s."errorCount" END,
         "lastError" = CASE WHEN session_expired THEN NULL ELSE s."lastError" END,
         "lastIntent" = CASE WHEN session_expired THEN NULL ELSE s."lastIntent" END,
         "lastTool" = CASE WHEN session_expired THEN NULL ELSE s."lastTool" END;
END;
$fn$;
