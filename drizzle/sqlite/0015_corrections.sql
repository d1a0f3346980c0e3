CREATE TABLE `corrections` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`chatbot_id` integer NOT NULL,
	`question` text NOT NULL,
	`answer` text NOT NULL,
	`source_name` text,
	`source_url` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`chatbot_id`) REFERENCES `chatbots`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `corrections_chatbot_idx` ON `corrections` (`chatbot_id`);