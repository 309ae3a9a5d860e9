-- Custom migration (drizzle-kit writes neither expression indexes nor generated tsvector columns).
--
-- 1. `row_changes_entity_row`, as in SQLite (drizzle/sqlite/0001_row_changes_entity_row.sql): finds an
-- entity table's row change by row id across all packets. The row id is the `id` of the row's new
-- data, or of its old data (a deletion); the queries repeat this expression and this WHERE term.
CREATE INDEX "row_changes_entity_row" ON "row_changes" ("table_name", (coalesce("new_data" ->> 'id', "old_data" ->> 'id'))) WHERE "table_name" IN ('musicbrainz.area', 'musicbrainz.artist', 'musicbrainz.event', 'musicbrainz.instrument', 'musicbrainz.label', 'musicbrainz.place', 'musicbrainz.recording', 'musicbrainz.release', 'musicbrainz.release_group', 'musicbrainz.series', 'musicbrainz.work');
--> statement-breakpoint
-- 2. The search index, the PostgreSQL twin of SQLite's FTS5 table (drizzle/sqlite/0008_search.sql,
-- src/db/searchIndex.ts): one row per CURRENT entity, `id` its newest change id (SQLite's rowid), the
-- same four columns, and `document`, their words without case or diacritics (`unaccent`, then the
-- `simple` configuration: no stemming, like unicode61), weighted A (name), B (sort name), C (aliases)
-- and D (disambiguation): ranked by ts_rank('{0.1, 0.3, 0.5, 1.0}', document, query) (weights at most 1, given
-- D, C, B, A), they mirror the ratios of the bm25 weights 10, 5, 3, 1 of the SQLite search.
-- unaccent is a trusted extension: a database owner may create it without being superuser.
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;
--> statement-breakpoint
-- unaccent() is only STABLE (its dictionary could change); a generated column needs an IMMUTABLE
-- function, so this wrapper names the dictionary itself.
CREATE FUNCTION livefeed_unaccent(text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$;
--> statement-breakpoint
CREATE TABLE "search_index" (
	"id" bigint PRIMARY KEY NOT NULL,
	"name" text,
	"sort_name" text,
	"aliases" text,
	"disambiguation" text,
	"document" tsvector GENERATED ALWAYS AS (
		setweight(to_tsvector('simple', livefeed_unaccent(coalesce("name", ''))), 'A') ||
		setweight(to_tsvector('simple', livefeed_unaccent(coalesce("sort_name", ''))), 'B') ||
		setweight(to_tsvector('simple', livefeed_unaccent(coalesce("aliases", ''))), 'C') ||
		setweight(to_tsvector('simple', livefeed_unaccent(coalesce("disambiguation", ''))), 'D')
	) STORED
);
--> statement-breakpoint
CREATE INDEX "search_index_document" ON "search_index" USING gin ("document");
