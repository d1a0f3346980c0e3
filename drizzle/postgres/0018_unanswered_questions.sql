CREATE TABLE "unanswered_questions" (
	"reply_id" integer PRIMARY KEY NOT NULL,
	"chatbot_id" integer NOT NULL,
	"conversation_id" integer NOT NULL,
	"asked_at" text NOT NULL,
	"cannot_answer" boolean NOT NULL,
	"bad_rating" boolean NOT NULL,
	"question" text NOT NULL,
	"question_key" text
);
--> statement-breakpoint
DROP INDEX "messages_unanswered_idx";--> statement-breakpoint
ALTER TABLE "unanswered_questions" ADD CONSTRAINT "unanswered_questions_reply_id_messages_id_fk" FOREIGN KEY ("reply_id") REFERENCES "public"."messages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "unanswered_questions" ADD CONSTRAINT "unanswered_questions_chatbot_id_chatbots_id_fk" FOREIGN KEY ("chatbot_id") REFERENCES "public"."chatbots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "unanswered_questions_scope_idx" ON "unanswered_questions" USING btree ("chatbot_id","asked_at");--> statement-breakpoint
CREATE INDEX "unanswered_questions_unkeyed_idx" ON "unanswered_questions" USING btree ("reply_id") WHERE question_key IS NULL;