CREATE TABLE `webhooks` (
	`name` text PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`entities` text,
	`mbids` text,
	`cursor` text,
	`delivered_packet` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`last_error_at` text,
	`next_retry_at` text,
	`last_attempt_at` text,
	`last_success_at` text,
	`delivered_events` integer DEFAULT 0 NOT NULL,
	`deliveries` integer DEFAULT 0 NOT NULL,
	`failed_deliveries` integer DEFAULT 0 NOT NULL,
	`added_at` text NOT NULL,
	`retired_at` text
);
