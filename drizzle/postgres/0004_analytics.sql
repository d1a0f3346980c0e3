CREATE TABLE "source_citations" (
	"chatbot_id" integer NOT NULL,
	"name" text NOT NULL,
	"cited" integer DEFAULT 0 NOT NULL,
	"last_cited_at" text NOT NULL,
	CONSTRAINT "source_citations_chatbot_id_name_pk" PRIMARY KEY("chatbot_id","name")
);
--> statement-breakpoint
DROP INDEX "messages_conversation_idx";--> statement-breakpoint
ALTER TABLE "source_citations" ADD CONSTRAINT "source_citations_chatbot_id_chatbots_id_fk" FOREIGN KEY ("chatbot_id") REFERENCES "public"."chatbots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "conversations_chatbot_last_message_idx" ON "conversations" USING btree ("chatbot_id","last_message_at");--> statement-breakpoint
CREATE INDEX "leads_chatbot_created_idx" ON "leads" USING btree ("chatbot_id","created_at");--> statement-breakpoint
CREATE INDEX "messages_analytics_idx" ON "messages" USING btree ("conversation_id","created_at","role","regenerated","cannot_answer","rating","model");--> statement-breakpoint
CREATE INDEX "messages_unanswered_idx" ON "messages" USING btree ("created_at") WHERE role = 'assistant' AND NOT regenerated AND (cannot_answer OR rating = 'bad');