-- Claims read only unfinished items (issue 10): without these, the claim walked the primary key through every
-- finished item (≈ 4 ms per claim at 20,000 done rows, growing with history). Partial indexes are not
-- expressible in schema.prisma; they are documented on the WorkItem model.
CREATE INDEX "work_items_open_id_idx" ON "work_items" ("id") WHERE "state" IN ('queued', 'running');
CREATE INDEX "work_items_open_orderingKey_id_idx" ON "work_items" ("orderingKey", "id") WHERE "state" IN ('queued', 'running');
