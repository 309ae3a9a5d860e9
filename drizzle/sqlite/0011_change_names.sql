-- Each JSON dump line's name (`name`, else `title`) as the ingest's one-pass check finds it, so that
-- a page of search hits reads 20 short texts instead of parsing 20 lines of several KB (about 5 µs
-- a line; bench/RESULTS.md). Adding the column rewrites nothing: the lines stored before it read NULL
-- ("not known") and their names are read from the line, as before (src/db/searchQueries.ts).
ALTER TABLE `changes` ADD `name` text;
