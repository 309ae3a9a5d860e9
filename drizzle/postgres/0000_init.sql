CREATE TABLE "changes" (
	"id" bigint PRIMARY KEY NOT NULL,
	"packet" integer NOT NULL,
	"entity" text NOT NULL,
	"position" integer NOT NULL,
	"mbid" text NOT NULL,
	"data" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dumps" (
	"packet" integer NOT NULL,
	"entity" text NOT NULL,
	"status" text NOT NULL,
	"change_count" integer DEFAULT 0 NOT NULL,
	"quarantine_count" integer DEFAULT 0 NOT NULL,
	"file_name" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"checked_at" text,
	"next_retry_at" text,
	"settled_by" text,
	"signature_missing_since" text,
	"updated_at" text NOT NULL,
	CONSTRAINT "dumps_packet_entity_pk" PRIMARY KEY("packet","entity")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"at" text NOT NULL,
	"packet" integer,
	"kind" text NOT NULL,
	"message" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "feed_files" (
	"name" text PRIMARY KEY NOT NULL,
	"packet" integer NOT NULL,
	"size" bigint NOT NULL,
	"sha256" text NOT NULL,
	"signature" text NOT NULL,
	"fingerprint" text,
	"fetched_at" text NOT NULL,
	"stored_path" text,
	"signature_stored_path" text
);
--> statement-breakpoint
CREATE TABLE "meta" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "packets" (
	"number" integer PRIMARY KEY NOT NULL,
	"timestamp" text,
	"schema_sequence" integer,
	"synced_at" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "quarantine" (
	"packet" integer NOT NULL,
	"entity" text NOT NULL,
	"line" integer NOT NULL,
	"raw" "bytea" NOT NULL,
	"reason" text NOT NULL,
	CONSTRAINT "quarantine_packet_entity_line_pk" PRIMARY KEY("packet","entity","line")
);
--> statement-breakpoint
CREATE TABLE "removals" (
	"mbid" text NOT NULL,
	"entity" text NOT NULL,
	"packet" integer NOT NULL,
	"kind" text NOT NULL,
	"merged_into" text,
	CONSTRAINT "removals_packet_mbid_kind_pk" PRIMARY KEY("packet","mbid","kind")
);
--> statement-breakpoint
CREATE TABLE "replication_packets" (
	"packet" integer PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"format" text,
	"schema_sequence" integer,
	"timestamp" text,
	"dbmirror_version" integer,
	"row_count" integer DEFAULT 0 NOT NULL,
	"file_name" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_retry_at" text,
	"missing_since" text,
	"signature_missing_since" text,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "row_changes" (
	"packet" integer NOT NULL,
	"ord" integer NOT NULL,
	"seqid" bigint NOT NULL,
	"xid" bigint NOT NULL,
	"table_name" text NOT NULL,
	"op" text NOT NULL,
	"keys" jsonb,
	"old_data" jsonb,
	"new_data" jsonb,
	"timestamp" text,
	CONSTRAINT "row_changes_packet_ord_pk" PRIMARY KEY("packet","ord")
);
--> statement-breakpoint
CREATE TABLE "sync_lock" (
	"id" integer PRIMARY KEY NOT NULL,
	"pid" integer NOT NULL,
	"host" text NOT NULL,
	"acquired_at" text NOT NULL,
	"heartbeat_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"name" text PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"entities" jsonb,
	"mbids" jsonb,
	"cursor" text,
	"delivered_packet" integer,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"last_error_at" text,
	"next_retry_at" text,
	"last_attempt_at" text,
	"last_success_at" text,
	"delivered_events" bigint DEFAULT 0 NOT NULL,
	"deliveries" bigint DEFAULT 0 NOT NULL,
	"failed_deliveries" bigint DEFAULT 0 NOT NULL,
	"added_at" text NOT NULL,
	"retired_at" text
);
--> statement-breakpoint
CREATE INDEX "changes_mbid" ON "changes" USING btree ("mbid");--> statement-breakpoint
CREATE INDEX "dumps_status" ON "dumps" USING btree ("status","settled_by","packet");--> statement-breakpoint
CREATE INDEX "feed_files_packet" ON "feed_files" USING btree ("packet");--> statement-breakpoint
CREATE INDEX "packets_synced_at" ON "packets" USING btree ("synced_at","number");--> statement-breakpoint
CREATE INDEX "removals_mbid" ON "removals" USING btree ("mbid","packet","kind");--> statement-breakpoint
CREATE INDEX "removals_entity" ON "removals" USING btree ("entity","packet","mbid","kind");--> statement-breakpoint
CREATE INDEX "replication_packets_status" ON "replication_packets" USING btree ("status","packet");--> statement-breakpoint
CREATE INDEX "row_changes_table" ON "row_changes" USING btree ("packet","table_name","ord","op");