DROP INDEX "changes_mbid";--> statement-breakpoint
CREATE INDEX "changes_mbid" ON "changes" USING btree ("mbid","id");