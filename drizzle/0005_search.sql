-- The search index (src/db/searchIndex.ts): one row per CURRENT entity, rowid = its current change
-- id. Contentless (the names stay in `changes`), contentless_delete so that a replaced version is
-- deleted by rowid alone; unicode61 with remove_diacritics 2: case and diacritics do not matter.
CREATE VIRTUAL TABLE `search_index` USING fts5(
	name, sort_name, aliases, disambiguation,
	content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
-- Data migration for databases made by earlier versions: the current version of every CURRENT
-- entity, in rowid order; the same columns as INDEX_COLUMNS in src/db/searchIndex.ts.
INSERT INTO `search_index` (rowid, name, sort_name, aliases, disambiguation)
SELECT c.id,
  json_extract(c.data, iif(c.entity IN ('recording', 'release', 'release-group', 'work'), '$.title', '$.name')),
  json_extract(c.data, '$."sort-name"'),
  (SELECT group_concat(iif(a.value ->> 'sort-name' IS a.value ->> 'name', a.value ->> 'name',
     concat_ws(' ', a.value ->> 'name', a.value ->> 'sort-name')), ' ') FROM json_each(json_extract(c.data, '$.aliases')) a),
  json_extract(c.data, '$.disambiguation')
FROM current_state s JOIN changes c ON c.id = s.change_id
WHERE s.status = 'CURRENT' ORDER BY c.id;
