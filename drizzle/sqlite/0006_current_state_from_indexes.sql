-- The current state is read from `changes_mbid` (the newest line of an MBID) and `removals_mbid`
-- (its newest removal) since this version (src/db/currentQueries.ts): the table that repeated both
-- cost the JSON dump ingest a B-tree of random-UUID keys per line. Nothing to carry over: every row
-- of it was derived from `changes` and `removals`, which stay. `removals_mbid` gains the packet and
-- kind, so that the newest removal of an MBID is one index seek without a sort.
DROP TABLE `current_state`;--> statement-breakpoint
DROP INDEX `removals_mbid`;--> statement-breakpoint
CREATE INDEX `removals_mbid` ON `removals` (`mbid`,`packet`,`kind`);