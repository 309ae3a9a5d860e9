-- The current state is read from `changes_mbid` (the newest line of an MBID) and `removals` (its
-- newest removal) since this version (src/db/currentQueries.ts): the table that repeated both cost
-- the JSON dump ingest a B-tree of random-UUID keys per line. Nothing to carry over: every row of it
-- was derived from `changes` and `removals`, which stay.
DROP TABLE `current_state`;
