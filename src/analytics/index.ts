import { z } from "zod";
import type { Chatbots } from "../core/chatbots.js";
import { emptyDay } from "../core/day-counts.js";
import { DEFAULT_PER_PAGE, pageMeta, pageQueryShape, type Page } from "../core/pagination.js";
import type { AnalyticsStore, DayCounts } from "../core/storage/index.js";
import { parse } from "../core/validation.js";
import { groupWordings, type QuestionGroup } from "./questions.js";
import { buckets, overviewQuerySchema, resolveRange, scopeShape, type Bucket, type Interval } from "./range.js";

export { MAX_BUCKETS, DEFAULT_DAYS } from "./range.js";
export type { QuestionGroup } from "./questions.js";

/** What is counted per bucket and in the totals. */
export type Counts = Omit<DayCounts, "day">;

export interface BucketCounts extends Bucket, Counts {}

/** `GET /analytics` data. */
export interface AnalyticsOverview {
  /** The chatbot's slug, or null for every chatbot of the organisation. */
  chatbot: string | null;
  interval: Interval;
  /** The range counted (ISO, inclusive), defaults applied. */
  since: string;
  until: string;
  /** Buckets are UTC days, or weeks starting Monday 00:00 UTC. */
  timezone: "UTC";
  buckets: BucketCounts[];
  totals: Counts;
}

/** A document with how often replies cited it (`GET /analytics/sources`). */
export interface SourceStats {
  document_id: number;
  /** The chatbot's slug. */
  chatbot: string;
  name: string;
  type: string;
  url: string | null;
  /** Replies that named it in `sources`. */
  cited: number;
  last_cited_at: string | null;
}

/** Query of `GET /analytics/unanswered`. */
export const unansweredQuerySchema = z.object({ ...scopeShape, page: pageQueryShape.page, per_page: pageQueryShape.per_page }, { error: "The query must be an object." });
/** Query of `GET /analytics/sources`. */
export const sourcesQuerySchema = z.object({ chatbot: pageQueryShape.chatbot, page: pageQueryShape.page, per_page: pageQueryShape.per_page }, { error: "The query must be an object." });
export { overviewQuerySchema };

export type OverviewQuery = z.input<typeof overviewQuerySchema>;
export type UnansweredQuery = z.input<typeof unansweredQuerySchema>;
export type SourcesQuery = z.input<typeof sourcesQuerySchema>;

export type Analytics = ReturnType<typeof createAnalytics>;

const sum = (rows: Counts[]): Counts => {
  const { day: _, ...totals } = emptyDay("");
  for (const row of rows) for (const key of Object.keys(totals) as (keyof Counts)[]) totals[key] += row[key];
  return totals;
};

const page = <T>(all: T[], q: { page?: number; per_page?: number }): Page<T> => {
  const { page: number = 1, per_page: perPage = DEFAULT_PER_PAGE } = q;
  const data = all.slice((number - 1) * perPage, number * perPage);
  return { data, meta: pageMeta({ page: number, perPage, total: all.length, count: data.length }) };
};

/**
 * Reports over an organisation's conversations (or one chatbot's): counts per
 * day or week, the questions the bot could not answer, and which documents its
 * replies cite. A `chatbot` slug of another organisation is a 403, as on every
 * route naming a chatbot.
 *
 * @example
 * const week = await service.analytics.overview(orgId, { chatbot: "demo", interval: "week" });
 * const { data } = await service.analytics.unanswered(orgId, { since: "2025-01-01" });
 */
export function createAnalytics(store: AnalyticsStore, chatbots: Pick<Chatbots, "resolve" | "list">) {
  /** The chatbots a report covers, and their slugs by id. */
  const scope = async (organizationId: number, slug: string | undefined) => {
    const bots = slug === undefined ? await chatbots.list(organizationId) : [await chatbots.resolve(organizationId, slug)];
    return { ids: bots.map((b) => b.id), slugs: new Map(bots.map((b) => [b.id, b.slug])) };
  };

  return {
    /** Counts per bucket (zero-filled) and in total. */
    async overview(organizationId: number, query: OverviewQuery = {}): Promise<AnalyticsOverview> {
      const q = parse(overviewQuerySchema, query);
      const range = resolveRange(q);
      const interval = q.interval ?? "day";
      const slots = buckets(range, interval);
      const { ids } = await scope(organizationId, q.chatbot);
      const days = await store.daily({ chatbot_ids: ids, ...range });
      let next = 0;
      const filled = slots.map((slot) => {
        const { day: _, ...counts } = emptyDay(slot.start);
        while (next < days.length && days[next]!.day <= slot.end) {
          const { day: __, ...found } = days[next++]!;
          for (const key of Object.keys(counts) as (keyof Counts)[]) counts[key] += found[key];
        }
        return { ...slot, ...counts };
      });
      return { chatbot: q.chatbot ?? null, interval, ...range, timezone: "UTC", buckets: filled, totals: sum(filled) };
    },

    /** Visitor questions whose reply could not answer or was rated bad, near-duplicates grouped; one page. */
    async unanswered(organizationId: number, query: UnansweredQuery = {}): Promise<Page<QuestionGroup>> {
      const q = parse(unansweredQuerySchema, query);
      const range = resolveRange(q);
      const { ids } = await scope(organizationId, q.chatbot);
      return page(groupWordings(await store.unanswered({ chatbot_ids: ids, ...range })), q);
    },

    /** Every document, most cited first (never-cited ones included, with 0); one page. */
    async sources(organizationId: number, query: SourcesQuery = {}): Promise<Page<SourceStats>> {
      const q = parse(sourcesQuerySchema, query);
      const { ids, slugs } = await scope(organizationId, q.chatbot);
      const rows = await store.citations(ids);
      return page(
        rows.map(({ chatbot_id, ...row }) => ({ document_id: row.document_id, chatbot: slugs.get(chatbot_id)!, name: row.name, type: row.type, url: row.url, cited: row.cited, last_cited_at: row.last_cited_at })),
        q,
      );
    },
  };
}
