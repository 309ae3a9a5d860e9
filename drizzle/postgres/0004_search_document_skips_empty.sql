-- Custom migration (drizzle-kit writes no generated tsvector column).
-- The search index's `document` (drizzle/postgres/0001) again, with the same value for every row,
-- computed without the calls that give nothing: a column that is NULL or empty is the empty tsvector
-- at once instead of going through livefeed_unaccent (an SQL function PostgreSQL cannot inline, its
-- body being only STABLE), to_tsvector and setweight. Concatenating the empty tsvector changes
-- nothing (no word, no position), so documents and ranks stay as they were. Most entities have no
-- sort name, alias or disambiguation: on the 220 MB benchmark dump this halved the search index's
-- insert, 2.7-3.0 s -> 1.4-1.5 s for 147,616 rows (bench/RESULTS.md). PostgreSQL 15 cannot change a
-- generated column's expression, so the column is made again (the table is rewritten once, and its
-- GIN index built again).
ALTER TABLE "search_index" DROP COLUMN "document";
--> statement-breakpoint
ALTER TABLE "search_index" ADD COLUMN "document" tsvector GENERATED ALWAYS AS (
	CASE WHEN coalesce("name", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_unaccent("name")), 'A') END ||
	CASE WHEN coalesce("sort_name", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_unaccent("sort_name")), 'B') END ||
	CASE WHEN coalesce("aliases", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_unaccent("aliases")), 'C') END ||
	CASE WHEN coalesce("disambiguation", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_unaccent("disambiguation")), 'D') END
) STORED;
--> statement-breakpoint
CREATE INDEX "search_index_document" ON "search_index" USING gin ("document");
