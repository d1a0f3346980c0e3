CREATE TABLE "analytics_daily" (
	"chatbot_id" integer NOT NULL,
	"day" text NOT NULL,
	"conversations" integer DEFAULT 0 NOT NULL,
	"visitor_messages" integer DEFAULT 0 NOT NULL,
	"answered" integer DEFAULT 0 NOT NULL,
	"cannot_answer" integer DEFAULT 0 NOT NULL,
	"good_ratings" integer DEFAULT 0 NOT NULL,
	"bad_ratings" integer DEFAULT 0 NOT NULL,
	"leads" integer DEFAULT 0 NOT NULL,
	"handoffs" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "analytics_daily_chatbot_id_day_pk" PRIMARY KEY("chatbot_id","day")
);
--> statement-breakpoint
ALTER TABLE "analytics_daily" ADD CONSTRAINT "analytics_daily_chatbot_id_chatbots_id_fk" FOREIGN KEY ("chatbot_id") REFERENCES "public"."chatbots"("id") ON DELETE cascade ON UPDATE no action;