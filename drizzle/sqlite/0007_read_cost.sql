DROP INDEX `dumps_status`;--> statement-breakpoint
CREATE INDEX `dumps_status` ON `dumps` (`status`,`settled_by`,`packet`);--> statement-breakpoint
CREATE INDEX `packets_synced_at` ON `packets` (`synced_at`,`number`);--> statement-breakpoint
CREATE INDEX `removals_entity` ON `removals` (`entity`,`packet`,`mbid`,`kind`);--> statement-breakpoint
CREATE INDEX `replication_packets_status` ON `replication_packets` (`status`,`packet`);--> statement-breakpoint
-- Data migration: the latest-packet mark (meta `latest_packet`, src/db/latestPacket.ts) for
-- databases made by earlier versions: the first packet, and the packet before the first gap (an
-- incomplete packet or a missing number) when that is not before the first packet.
INSERT OR REPLACE INTO `meta` (key, value)
SELECT 'latest_packet', json_object('from', f.first, 'number', CASE WHEN g.gap - 1 >= f.first THEN g.gap - 1 END)
FROM (SELECT min(number) AS first FROM packets) f,
  (SELECT min(x) AS gap FROM (
     SELECT number AS x FROM packets WHERE synced_at IS NULL
     UNION ALL
     SELECT p.number + 1 FROM packets p WHERE NOT EXISTS (SELECT 1 FROM packets q WHERE q.number = p.number + 1))) g
WHERE f.first IS NOT NULL;
