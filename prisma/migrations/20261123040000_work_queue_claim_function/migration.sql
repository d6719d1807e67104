-- The queue's ordered claim (issue 10) as a function, so that its plan is always the one a queue wants: walk the
-- unfinished items in id order on the partial index "work_items_open_id_idx" and stop at the first runnable one.
-- As a plain statement its plan followed the table's statistics: with none or stale ones (a new database, or
-- autovacuum off) PostgreSQL chose a bitmap scan of every unfinished-looking index entry plus a sort, and a
-- bitmap scan never marks the entries of finished items dead, so each claim read thousands of them (6.3 ms a
-- claim in a 1,000-mention burst, 80 % of the database's time). The SET clauses leave index scans and nested
-- loops as the only plan, which PL/pgSQL may then keep for the connection instead of planning every claim.
--
-- The rule, as in src/intake/work-queue.ts (FIRST_IN_CONVERSATION): an item is runnable when it is queued and
-- due, or running with an expired claim and attempts left; and no older unfinished item has its ordering key
-- (so a 「はい」 never overtakes its request). People first: messages and notices before background `work`
-- (the second branch runs only when the first finds nothing).
CREATE FUNCTION claim_work_item(p_token text, p_ttl_ms integer, p_types text[])
RETURNS SETOF work_items
LANGUAGE plpgsql
SET enable_bitmapscan = off
SET enable_sort = off
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $fn$
BEGIN
  RETURN QUERY
  UPDATE work_items AS u
     SET state = 'running', "claimedBy" = p_token,
         "claimExpiresAt" = now() + p_ttl_ms * interval '1 millisecond',
         attempts = u.attempts + 1, "updatedAt" = now()
   WHERE u.id = (
     SELECT c.id FROM (
       SELECT people.id FROM (
         SELECT w.id FROM work_items w
          WHERE w.type IN ('user_request', 'notification') AND w.type = ANY (p_types)
            AND w.state IN ('queued', 'running')
            AND ((w.state = 'queued' AND w."runAt" <= now())
                 OR (w.state = 'running' AND w."claimExpiresAt" < now() AND w.attempts <= w."maxAttempts"))
            AND NOT EXISTS (
              SELECT 1 FROM work_items p
               WHERE p."orderingKey" = w."orderingKey" AND p.id < w.id AND p.state IN ('queued', 'running'))
          ORDER BY w.id
          LIMIT 1
          FOR UPDATE SKIP LOCKED) people
       UNION ALL
       SELECT background.id FROM (
         SELECT w.id FROM work_items w
          WHERE w.type = 'work' AND w.type = ANY (p_types)
            AND w.state IN ('queued', 'running')
            AND ((w.state = 'queued' AND w."runAt" <= now())
                 OR (w.state = 'running' AND w."claimExpiresAt" < now() AND w.attempts <= w."maxAttempts"))
            AND NOT EXISTS (
              SELECT 1 FROM work_items p
               WHERE p."orderingKey" = w."orderingKey" AND p.id < w.id AND p.state IN ('queued', 'running'))
          ORDER BY w.id
          LIMIT 1
          FOR UPDATE SKIP LOCKED) background
     ) c
     LIMIT 1)
  RETURNING u.*;
END
$fn$;
