CREATE TABLE `web_sitemaps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`chatbot_id` integer NOT NULL,
	`url` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`chatbot_id`) REFERENCES `chatbots`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `web_sitemaps_chatbot_url_idx` ON `web_sitemaps` (`chatbot_id`,`url`);