-- The search index again, with FTS5 prefix indexes for prefixes of 1 to 4 characters: the last word
-- of a search matches as a prefix (search as you type), and without an index of its length FTS5
-- reads and merges the entries of every word that starts with it before the first hit (15-30 ms
-- for a 2-letter prefix on 1M entities; 0.1 ms with the index; bench/RESULTS.md). An FTS5 table
-- cannot gain prefix indexes, so it is made again (same columns, in the same order, as
-- drizzle/0008_search.sql and src/db/searchIndex.ts) and filled again.
DROP TABLE `search_index`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `search_index` USING fts5(
	name, sort_name, aliases, disambiguation,
	content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2',
	prefix = '1 2 3 4'
);
--> statement-breakpoint
-- The current version of every CURRENT entity, in rowid order: the fill of drizzle/0008_search.sql
-- (the same columns as INDEX_COLUMNS in src/db/searchIndex.ts).
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
--> statement-breakpoint
-- One segment instead of the several the fill leaves: each search looks a phrase up in every
-- segment (a page of a common word: 0.09 ms with 7 segments, 0.025 ms with one; 2 s on 1M entities).
INSERT INTO `search_index` (`search_index`) VALUES ('optimize');
