CREATE TABLE `console_login_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `console_login_tokens_expires_idx` ON `console_login_tokens` (`expires_at`);--> statement-breakpoint
CREATE TABLE `console_sessions` (
	`session_hash` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`last_seen_at` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `console_sessions_last_seen_idx` ON `console_sessions` (`last_seen_at`);