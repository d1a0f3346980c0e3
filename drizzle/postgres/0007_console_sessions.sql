CREATE TABLE "console_login_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"expires_at" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "console_sessions" (
	"session_hash" text PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"last_seen_at" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "console_login_tokens" ADD CONSTRAINT "console_login_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "console_login_tokens_expires_idx" ON "console_login_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "console_sessions_last_seen_idx" ON "console_sessions" USING btree ("last_seen_at");