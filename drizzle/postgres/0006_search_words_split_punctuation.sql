-- Custom migration (drizzle-kit writes no generated tsvector column).
-- The search index's words as SQLite's FTS5 cuts them (unicode61: anything that is not a letter or a
-- digit separates words; README, Search): PostgreSQL's parser keeps "AC/DC" (a path), "R.E.M." and
-- "www.example.com" (hosts), "foo@bar.com" (an email), "3.14" (a number) and "jay-z" (a hyphenated
-- word) as words of their own, so "dc", "rem", "example", "14" or "jay z" found them on SQLite only.
-- livefeed_search_words writes ASCII punctuation as spaces after unaccent (which can write some, as
-- "1/2" for "½"); other punctuation is a separator for the parser already. The query side
-- (src/db/postgres/searchReads.ts) goes through the same function. The document is made again as in
-- 0004 (PostgreSQL 15 cannot change a generated column's expression): the table is rewritten once.
CREATE FUNCTION livefeed_search_words(text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT regexp_replace(public.unaccent('public.unaccent'::regdictionary, $1), '[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]+', ' ', 'g') $$;
--> statement-breakpoint
ALTER TABLE "search_index" DROP COLUMN "document";
--> statement-breakpoint
ALTER TABLE "search_index" ADD COLUMN "document" tsvector GENERATED ALWAYS AS (
	CASE WHEN coalesce("name", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_search_words("name")), 'A') END ||
	CASE WHEN coalesce("sort_name", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_search_words("sort_name")), 'B') END ||
	CASE WHEN coalesce("aliases", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_search_words("aliases")), 'C') END ||
	CASE WHEN coalesce("disambiguation", '') = '' THEN ''::tsvector
		ELSE setweight(to_tsvector('simple', livefeed_search_words("disambiguation")), 'D') END
) STORED;
--> statement-breakpoint
CREATE INDEX "search_index_document" ON "search_index" USING gin ("document");
