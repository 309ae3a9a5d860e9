CREATE TABLE `changes` (
	`id` integer PRIMARY KEY NOT NULL,
	`packet` integer NOT NULL,
	`entity` text NOT NULL,
	`position` integer NOT NULL,
	`mbid` text NOT NULL,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `changes_mbid` ON `changes` (`mbid`);--> statement-breakpoint
CREATE TABLE `dumps` (
	`packet` integer NOT NULL,
	`entity` text NOT NULL,
	`status` text NOT NULL,
	`change_count` integer DEFAULT 0 NOT NULL,
	`quarantine_count` integer DEFAULT 0 NOT NULL,
	`file_name` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`checked_at` text,
	`next_retry_at` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`packet`, `entity`)
);
--> statement-breakpoint
CREATE INDEX `dumps_status` ON `dumps` (`status`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` text NOT NULL,
	`packet` integer,
	`kind` text NOT NULL,
	`message` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `feed_files` (
	`name` text PRIMARY KEY NOT NULL,
	`packet` integer NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`signature` text NOT NULL,
	`fingerprint` text,
	`fetched_at` text NOT NULL,
	`stored_path` text,
	`signature_stored_path` text
);
--> statement-breakpoint
CREATE INDEX `feed_files_packet` ON `feed_files` (`packet`);--> statement-breakpoint
CREATE TABLE `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `packets` (
	`number` integer PRIMARY KEY NOT NULL,
	`timestamp` text,
	`schema_sequence` integer,
	`synced_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `quarantine` (
	`packet` integer NOT NULL,
	`entity` text NOT NULL,
	`line` integer NOT NULL,
	`raw` text NOT NULL,
	`reason` text NOT NULL,
	PRIMARY KEY(`packet`, `entity`, `line`)
);
--> statement-breakpoint
CREATE TABLE `removals` (
	`mbid` text NOT NULL,
	`entity` text NOT NULL,
	`packet` integer NOT NULL,
	`kind` text NOT NULL,
	`merged_into` text,
	PRIMARY KEY(`packet`, `mbid`, `kind`)
);
--> statement-breakpoint
CREATE INDEX `removals_mbid` ON `removals` (`mbid`);--> statement-breakpoint
CREATE TABLE `replication_packets` (
	`packet` integer PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`format` text,
	`schema_sequence` integer,
	`timestamp` text,
	`dbmirror_version` integer,
	`row_count` integer DEFAULT 0 NOT NULL,
	`file_name` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_retry_at` text,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `row_changes` (
	`packet` integer NOT NULL,
	`ord` integer NOT NULL,
	`seqid` integer NOT NULL,
	`xid` integer NOT NULL,
	`table_name` text NOT NULL,
	`op` text NOT NULL,
	`keys` text,
	`old_data` text,
	`new_data` text,
	`timestamp` text,
	PRIMARY KEY(`packet`, `ord`)
);
--> statement-breakpoint
CREATE INDEX `row_changes_table` ON `row_changes` (`packet`,`table_name`,`op`);--> statement-breakpoint
CREATE TABLE `sync_lock` (
	`id` integer PRIMARY KEY NOT NULL,
	`pid` integer NOT NULL,
	`host` text NOT NULL,
	`acquired_at` text NOT NULL,
	`heartbeat_at` text NOT NULL
);
