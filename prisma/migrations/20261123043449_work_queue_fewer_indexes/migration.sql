-- Every claim, completion and intake insert of a work item writes each of this table's indexes. The claim and the
-- conversation-order check use the partial indexes of unfinished items (20261122235900); these two served nothing
-- on the hot path (the retention purge of finished items, once a day, scans the table instead).
-- DropIndex
DROP INDEX "work_items_state_runAt_idx";

-- DropIndex
DROP INDEX "work_items_orderingKey_id_idx";
