ALTER TABLE "documents" ADD COLUMN "etag" text;--> statement-breakpoint
ALTER TABLE "documents" ADD COLUMN "last_modified" text;--> statement-breakpoint
ALTER TABLE "documents" ADD COLUMN "fetched_at" text;--> statement-breakpoint
-- Pages ingested before validators were kept: sync fetches them unconditionally once, then compares hashes.
UPDATE "documents" SET "fetched_at" = "updated_at" WHERE "type" = 'url' AND ("source" LIKE 'http://%' OR "source" LIKE 'https://%');
