CREATE TABLE `source_citations` (
	`chatbot_id` integer NOT NULL,
	`name` text NOT NULL,
	`cited` integer DEFAULT 0 NOT NULL,
	`last_cited_at` text NOT NULL,
	PRIMARY KEY(`chatbot_id`, `name`),
	FOREIGN KEY (`chatbot_id`) REFERENCES `chatbots`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
DROP INDEX `messages_conversation_idx`;--> statement-breakpoint
CREATE INDEX `messages_analytics_idx` ON `messages` (`conversation_id`,`created_at`,`role`,`regenerated`,`cannot_answer`,`rating`,`model`);--> statement-breakpoint
CREATE INDEX `messages_unanswered_idx` ON `messages` (`created_at`) WHERE role = 'assistant' AND regenerated = 0 AND (cannot_answer = 1 OR rating = 'bad');--> statement-breakpoint
CREATE INDEX `conversations_chatbot_last_message_idx` ON `conversations` (`chatbot_id`,`last_message_at`);--> statement-breakpoint
CREATE INDEX `leads_chatbot_created_idx` ON `leads` (`chatbot_id`,`created_at`);