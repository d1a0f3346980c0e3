CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`organization_id` integer NOT NULL,
	`action` text NOT NULL,
	`actor` text NOT NULL,
	`detail` text DEFAULT '{}' NOT NULL,
	`counts` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `audit_log_org_created_idx` ON `audit_log` (`organization_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `organizations` ADD `retention_days` integer;--> statement-breakpoint
ALTER TABLE `webhook_deliveries` ADD `conversation_id` integer;--> statement-breakpoint
CREATE INDEX `webhook_deliveries_conversation_idx` ON `webhook_deliveries` (`conversation_id`);