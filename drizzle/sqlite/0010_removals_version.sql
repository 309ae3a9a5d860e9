-- A counter that changes in every transaction that changes `removals`, kept by SQLite itself so
-- that no writer path (a packet stored, stored again, pruned) can forget it. Readers cache which
-- MBIDs have any removal (src/db/removalFilter.ts) and trust the cache while the counter they read
-- in their snapshot is the one it was built at: most MBIDs then need no `removals` seek at all
-- (`resolve` of 100 MBIDs: 180 of 430 µs of its statement; bench/RESULTS.md). IF NOT EXISTS: tests
-- that make a database look older record the migrations after theirs as not run, and run them again.
INSERT INTO `meta` (`key`, `value`) VALUES ('removals_version', '0')
  ON CONFLICT (`key`) DO NOTHING;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `removals_version_insert` AFTER INSERT ON `removals` BEGIN
  UPDATE `meta` SET `value` = CAST(`value` AS INTEGER) + 1 WHERE `key` = 'removals_version';
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `removals_version_delete` AFTER DELETE ON `removals` BEGIN
  UPDATE `meta` SET `value` = CAST(`value` AS INTEGER) + 1 WHERE `key` = 'removals_version';
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `removals_version_update` AFTER UPDATE ON `removals` BEGIN
  UPDATE `meta` SET `value` = CAST(`value` AS INTEGER) + 1 WHERE `key` = 'removals_version';
END;
