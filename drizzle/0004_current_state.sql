CREATE TABLE `current_state` (
	`mbid` text PRIMARY KEY NOT NULL,
	`entity` text NOT NULL,
	`status` text NOT NULL,
	`change_id` integer,
	`packet` integer NOT NULL,
	`merged_into` text
) WITHOUT ROWID;
--> statement-breakpoint
-- Data migration for databases made by earlier versions: the newest change of each MBID (bare
-- columns of max() come from the row with the largest id), then the removals, oldest packet first,
-- each winning over a JSON dump line of the same or an earlier packet (src/db/currentQueries.ts).
INSERT INTO `current_state` (mbid, entity, status, change_id, packet, merged_into)
SELECT mbid, entity, 'CURRENT', max(id), packet, NULL FROM changes GROUP BY mbid;
--> statement-breakpoint
INSERT INTO `current_state` (mbid, entity, status, change_id, packet, merged_into)
SELECT mbid, entity, kind, NULL, packet, merged_into FROM removals WHERE true ORDER BY packet, kind
ON CONFLICT (mbid) DO UPDATE SET status = excluded.status, packet = excluded.packet,
  merged_into = excluded.merged_into
WHERE excluded.packet >= current_state.packet;
