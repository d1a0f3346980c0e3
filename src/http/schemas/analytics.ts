import { z } from "zod";
import type { AnalyticsOverview, Counts, QuestionGroup, SourceStats } from "../../analytics/index.js";
import { integer, timestamp } from "./common.js";

const day = z.string().meta({ format: "date", examples: ["2025-01-13"] });

const countsShape = {
  conversations: integer.meta({ description: "Conversations started" }),
  visitor_messages: integer.meta({ description: "Messages visitors sent" }),
  answered: integer.meta({ description: "Bot replies that answered (not the fallback; replaced replies and operator messages left out)" }),
  cannot_answer: integer.meta({ description: "Bot replies that were the fallback (`cannot_answer`)" }),
  good_ratings: integer.meta({ description: "Replies rated good, counted on the day of the reply" }),
  bad_ratings: integer.meta({ description: "Replies rated bad, counted on the day of the reply" }),
  leads: integer.meta({ description: "Leads captured" }),
  handoffs: integer.meta({ description: "Conversations that went to a person (counted once, when they first did)" }),
};

export const analyticsCountsSchema = z.strictObject(countsShape).meta({ id: "AnalyticsCounts" }) satisfies z.ZodType<Counts>;

export const analyticsOverviewSchema = z
  .strictObject({
    chatbot: z.string().nullable().meta({ description: "The chatbot's slug; null for every chatbot of the organisation" }),
    interval: z.enum(["day", "week"]),
    since: timestamp,
    until: timestamp,
    timezone: z.literal("UTC"),
    buckets: z.array(
      z
        .strictObject({ start: day.meta({ description: "First UTC day of the bucket" }), end: day.meta({ description: "Last UTC day of the bucket (inclusive)" }), ...countsShape })
        .meta({ id: "AnalyticsBucket" }),
    ),
    totals: analyticsCountsSchema,
  })
  .meta({ id: "AnalyticsOverview", description: "Counts per UTC day or week (Monday to Sunday), every bucket of the range present (zeros where nothing happened), and totals" }) satisfies z.ZodType<AnalyticsOverview>;

export const questionGroupSchema = z
  .strictObject({
    question: z.string().meta({ description: "The most recent wording" }),
    count: integer.meta({ description: "Replies to this question that could not answer or were rated bad" }),
    cannot_answer: integer,
    bad_ratings: integer,
    last_asked_at: timestamp,
    example_conversation_id: integer.meta({ description: "The conversation of the most recent ask" }),
    wordings: z.array(z.string()).meta({ description: "Up to five distinct wordings, most recent first" }),
  })
  .meta({ id: "UnansweredQuestion", description: "Visitor questions that are near-duplicates of each other, with how often their replies failed" }) satisfies z.ZodType<QuestionGroup>;

export const sourceStatsSchema = z
  .strictObject({
    document_id: integer,
    chatbot: z.string().meta({ description: "The chatbot's slug" }),
    name: z.string(),
    type: z.string().meta({ description: "`file` or `url`" }),
    url: z.string().nullable(),
    cited: integer.meta({ description: "Stored replies whose `sources` named the document" }),
    last_cited_at: timestamp.nullable(),
  })
  .meta({ id: "SourceStats", description: "A knowledge-base document and how often replies cited it" }) satisfies z.ZodType<SourceStats>;
