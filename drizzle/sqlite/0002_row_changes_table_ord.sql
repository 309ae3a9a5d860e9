DROP INDEX `row_changes_table`;--> statement-breakpoint
CREATE INDEX `row_changes_table` ON `row_changes` (`packet`,`table_name`,`ord`,`op`);