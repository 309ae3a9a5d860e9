-- The search index (src/db/searchIndex.ts): one row per CURRENT entity, rowid = its newest change
-- id. Contentless (the names stay in `changes`), contentless_delete so that a replaced version is
-- deleted by rowid alone; unicode61 with remove_diacritics 2: case and diacritics do not matter.
CREATE VIRTUAL TABLE `search_index` USING fts5(
	name, sort_name, aliases, disambiguation,
	content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
-- Data migration for databases made by earlier versions: the current version of every CURRENT
-- entity (src/db/currentQueries.ts: the MBID's newest line, when no removal of its packet or a
-- later one exists), in rowid order; the same columns as INDEX_COLUMNS in src/db/searchIndex.ts.
INSERT INTO `search_index` (rowid, name, sort_name, aliases, disambiguation)
SELECT c.id,
  json_extract(c.data, iif(c.entity IN ('recording', 'release', 'release-group', 'work'), '$.title', '$.name')),
  json_extract(c.data, '$."sort-name"'),
  iif(json_array_length(c.data, '$.aliases') > 0, (SELECT group_concat(iif(a.value ->> 'sort-name' IS a.value ->> 'name',
     a.value ->> 'name', concat_ws(' ', a.value ->> 'name', a.value ->> 'sort-name')), ' ')
     FROM json_each(json_extract(c.data, '$.aliases')) a WHERE a.type = 'object'), NULL),
  json_extract(c.data, '$.disambiguation')
FROM changes c
WHERE c.id = (SELECT id FROM changes WHERE mbid = c.mbid ORDER BY id DESC LIMIT 1)
  AND NOT EXISTS (SELECT 1 FROM removals WHERE mbid = c.mbid AND packet >= c.packet)
ORDER BY c.id;
