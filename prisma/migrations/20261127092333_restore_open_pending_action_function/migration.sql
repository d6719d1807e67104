-- open_pending_action comes back (decision record docs/decisions/0005-open-pending-action.md): replacing it with a
-- Prisma transaction (migration 20261127083224_drop_open_pending_action_function) made the turn that asks a
-- question 10 statements instead of 5 (tests/e2e/statement-counts.e2e.test.ts allows 6), and a single statement
-- cannot serialise two writers of one session (its snapshot predates any lock it takes). The body is the one of
-- migration 20261123063000_open_pending_action_function; its only caller is src/state/pending-actions.ts
-- (PendingActions.open), whose sweep states the same expiry rules.
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
                               "reasonCode", "expiresAt", "redactedCopy")
  VALUES (n.id, n."orgId", n.platform, n."roomId", n."accountId", n."memberId", n."turnId", 'pending', n.proposal,
          n.question, n."confirmationType", n."originalMessage", n.reasoning, n.confidence, n."questionKey",
          n."reasonCode", n."expiresAt", n."redactedCopy")
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
