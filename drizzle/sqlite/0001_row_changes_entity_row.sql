-- Custom migration (drizzle-kit cannot write expression indexes): finds an entity table's row
-- change by row id across all packets (src/db/schema.ts, ENTITY_ROW_ID_SQL and ENTITY_ROW_TABLES_SQL;
-- both must stay exactly as here, the queries repeat them so that SQLite uses this partial index).
CREATE INDEX `row_changes_entity_row` ON `row_changes` (`table_name`, CAST(coalesce(new_data ->> 'id', old_data ->> 'id') AS TEXT)) WHERE table_name IN ('musicbrainz.area', 'musicbrainz.artist', 'musicbrainz.event', 'musicbrainz.instrument', 'musicbrainz.label', 'musicbrainz.place', 'musicbrainz.recording', 'musicbrainz.release', 'musicbrainz.release_group', 'musicbrainz.series', 'musicbrainz.work');
