-- Opening a confirmation is TypeScript again (src/state/pending-actions.ts, PendingActions.open): one interactive
-- transaction that takes the session's advisory lock, supersedes or expires the session's earlier pending
-- action, inserts the new one and points the session at it. The PL/pgSQL function repeated those rules in a
-- second language; it goes.
DROP FUNCTION IF EXISTS open_pending_action(text, jsonb, timestamp(3), timestamp(3));
