ALTER TABLE `dumps` ADD `settled_by` text;--> statement-breakpoint
ALTER TABLE `dumps` ADD `signature_missing_since` text;--> statement-breakpoint
ALTER TABLE `replication_packets` ADD `missing_since` text;--> statement-breakpoint
ALTER TABLE `replication_packets` ADD `signature_missing_since` text;