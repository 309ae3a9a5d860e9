-- The search index again, its columns folded (src/db/searchFold.ts): unicode61 keeps the letters
-- Unicode does not decompose (Ø, Ł, ß, Æ, ﬁ), which PostgreSQL's unaccent spells out, so "royksopp"
-- missed "Røyksopp" on SQLite alone (issue 17). Entries made before this migration hold those
-- letters as words of their own; every entry is made again, the same way as the writers now make
-- them. `livefeed_fold` is the SQL function src/db/client.ts registers on every connection before
-- the migrations. The table keeps its definition (drizzle/sqlite/0009_search_prefixes.sql):
-- 'delete-all' empties a contentless table.
INSERT INTO `search_index` (`search_index`) VALUES ('delete-all');
--> statement-breakpoint
-- The current version of every CURRENT entity, in rowid order: the fill of drizzle/0009_search_prefixes.sql
-- with each column folded (the same columns as INDEX_COLUMNS in src/db/searchIndex.ts).
INSERT INTO `search_index` (rowid, name, sort_name, aliases, disambiguation)
SELECT c.id,
  livefeed_fold(json_extract(c.data, iif(c.entity IN ('recording', 'release', 'release-group', 'work'), '$.title', '$.name'))),
  livefeed_fold(json_extract(c.data, '$."sort-name"')),
  livefeed_fold(iif(json_array_length(c.data, '$.aliases') > 0, (SELECT group_concat(iif(a.value ->> 'sort-name' IS a.value ->> 'name',
     a.value ->> 'name', concat_ws(' ', a.value ->> 'name', a.value ->> 'sort-name')), ' ')
     FROM json_each(json_extract(c.data, '$.aliases')) a WHERE a.type = 'object'), NULL)),
  livefeed_fold(json_extract(c.data, '$.disambiguation'))
FROM changes c
WHERE c.id = (SELECT id FROM changes WHERE mbid = c.mbid ORDER BY id DESC LIMIT 1)
  AND NOT EXISTS (SELECT 1 FROM removals WHERE mbid = c.mbid AND packet >= c.packet)
ORDER BY c.id;
--> statement-breakpoint
-- One segment instead of the several the fill leaves (drizzle/0009_search_prefixes.sql).
INSERT INTO `search_index` (`search_index`) VALUES ('optimize');
