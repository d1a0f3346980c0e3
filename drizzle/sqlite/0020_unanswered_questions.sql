CREATE TABLE `unanswered_questions` (
	`reply_id` integer PRIMARY KEY NOT NULL,
	`chatbot_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`asked_at` text NOT NULL,
	`cannot_answer` integer NOT NULL,
	`bad_rating` integer NOT NULL,
	`question` text NOT NULL,
	`question_key` text,
	FOREIGN KEY (`reply_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`chatbot_id`) REFERENCES `chatbots`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `unanswered_questions_scope_idx` ON `unanswered_questions` (`chatbot_id`,`asked_at`);--> statement-breakpoint
CREATE INDEX `unanswered_questions_unkeyed_idx` ON `unanswered_questions` (`reply_id`) WHERE question_key IS NULL;--> statement-breakpoint
DROP INDEX `messages_unanswered_idx`;