CREATE TABLE `analytics_daily` (
	`chatbot_id` integer NOT NULL,
	`day` text NOT NULL,
	`conversations` integer DEFAULT 0 NOT NULL,
	`visitor_messages` integer DEFAULT 0 NOT NULL,
	`answered` integer DEFAULT 0 NOT NULL,
	`cannot_answer` integer DEFAULT 0 NOT NULL,
	`good_ratings` integer DEFAULT 0 NOT NULL,
	`bad_ratings` integer DEFAULT 0 NOT NULL,
	`leads` integer DEFAULT 0 NOT NULL,
	`handoffs` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`chatbot_id`, `day`),
	FOREIGN KEY (`chatbot_id`) REFERENCES `chatbots`(`id`) ON UPDATE no action ON DELETE cascade
);
