ALTER TABLE `documents` ADD `etag` text;--> statement-breakpoint
ALTER TABLE `documents` ADD `last_modified` text;--> statement-breakpoint
ALTER TABLE `documents` ADD `fetched_at` text;--> statement-breakpoint
-- Pages ingested before validators were kept: sync fetches them unconditionally once, then compares hashes.
UPDATE `documents` SET `fetched_at` = `updated_at` WHERE `type` = 'url' AND (`source` LIKE 'http://%' OR `source` LIKE 'https://%');
