ALTER TABLE `webhooks` ADD `last_failure_at` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `last_failure_status` integer;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `last_failure_error` text;