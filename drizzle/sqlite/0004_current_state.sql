-- This migration also filled the table from `changes` and `removals`. The fill is gone because 0005
-- drops the table again (the current state is read from the indexes, src/db/currentQueries.ts), so
-- that a database made before 0004 does not build it for nothing.
CREATE TABLE `current_state` (
	`mbid` text PRIMARY KEY NOT NULL,
	`entity` text NOT NULL,
	`status` text NOT NULL,
	`change_id` integer,
	`packet` integer NOT NULL,
	`merged_into` text
) WITHOUT ROWID;
