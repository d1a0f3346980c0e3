ALTER TABLE `chatbots` ADD `handoff_enabled` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `conversations` ADD `handling` text DEFAULT 'bot' NOT NULL;--> statement-breakpoint
ALTER TABLE `conversations` ADD `handed_off_at` text;--> statement-breakpoint
ALTER TABLE `conversations` ADD `handoff_reason` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `agent_name` text;