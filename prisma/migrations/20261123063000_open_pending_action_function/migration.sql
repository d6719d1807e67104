-- Opening a confirmation in one round trip (issue 10). BrainStateManager.createPending was an interactive
-- transaction of seven round trips (BEGIN, the session's lock, its read, the supersede, the insert, the
-- session upsert, COMMIT), about a third of the question turn's time. This function does the same steps in
-- the same order inside one call, each statement with its own snapshot, so the lock still serialises two
-- writers of one session (a single statement could not: its snapshot would predate the lock).
--
--   p_lock     the session's advisory-lock name (src/state/session-store.ts, sessionLockName)
--   p_row      the new pending action: its columns as JSON, timestamps in UTC
--   p_now      the caller's clock (UTC); p_session_expires: the session's new expiry
--
-- The session's earlier pending actions end as the expiry sweep (sweepSession) would end them: expired when
-- their own time or the session's is up, else cancelled as superseded by the new one. An expired session
-- starts afresh (rounds, errors and last intent cleared) and points at the new action, in
-- CONFIRMATION_PENDING. Decided actions lose their raw texts through the pending_actions_redact_decided
-- trigger, as with every other update.
CREATE FUNCTION open_pending_action(p_lock text, p_row jsonb, p_now timestamp(3), p_session_expires timestamp(3))
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
