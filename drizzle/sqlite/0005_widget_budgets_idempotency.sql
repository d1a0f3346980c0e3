CREATE TABLE `idempotency_keys` (
	`organization_id` integer NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`state` text NOT NULL,
	`status` integer,
	`body` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`organization_id`, `key`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created_idx` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `widget_budget_counters` (
	`chatbot_id` integer NOT NULL,
	`budget` text NOT NULL,
	`subject` text NOT NULL,
	`period` text NOT NULL,
	`used` integer DEFAULT 0 NOT NULL,
	`exhausted_at` text,
	PRIMARY KEY(`chatbot_id`, `budget`, `subject`, `period`),
	FOREIGN KEY (`chatbot_id`) REFERENCES `chatbots`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `widget_budget_counters_period_idx` ON `widget_budget_counters` (`period`);--> statement-breakpoint
CREATE TABLE `widget_budgets` (
	`chatbot_id` integer PRIMARY KEY NOT NULL,
	`visitor_per_day` integer,
	`chatbot_per_hour` integer,
	`chatbot_per_day` integer,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`chatbot_id`) REFERENCES `chatbots`(`id`) ON UPDATE no action ON DELETE cascade
);
