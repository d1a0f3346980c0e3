import { useState } from "preact/hooks";
import { call, query } from "../api.js";
import { BotSelect, Empty, Field, Loading, Notice, PageTitle, formatDate, useLoad } from "../ui.js";
import { BarChart } from "./chart.js";
import type { Bot } from "./chatbots.js";

interface Counts {
  conversations: number;
  visitor_messages: number;
  answered: number;
  cannot_answer: number;
  good_ratings: number;
  bad_ratings: number;
  leads: number;
}

interface Overview {
  interval: "day" | "week";
  buckets: (Counts & { start: string; end: string })[];
  totals: Counts;
}

interface Question {
  question: string;
  count: number;
  cannot_answer: number;
  bad_ratings: number;
  last_asked_at: string;
  example_conversation_id: number;
}

const RANGES = { "7": "Last 7 days", "30": "Last 30 days", "90": "Last 90 days (weekly)" } as const;

/** Counts from `GET /analytics` as charts, and the questions the bots failed from `GET /analytics/unanswered`. */
export function OverviewPage() {
  const { data: bots } = useLoad(async () => (await call<Bot[]>("chatbots")).data);
  const [chatbot, setChatbot] = useState("");
  const [days, setDays] = useState<keyof typeof RANGES>("30");
  const since = new Date(Date.now() - (Number(days) - 1) * 86_400_000).toISOString().slice(0, 10);
  const filter = { chatbot, since, interval: days === "90" ? "week" : "day" };
  const overview = useLoad(async () => (await call<Overview>(`v1/analytics${query(filter)}`)).data, [chatbot, days]);
  const unanswered = useLoad(async () => (await call<Question[]>(`v1/analytics/unanswered${query({ chatbot, since, per_page: 10 })}`)).data, [chatbot, days]);
  const data = overview.data;
  const labels = data?.buckets.map((b) => b.start.slice(5)) ?? [];
  const pick = (key: keyof Counts) => data?.buckets.map((b) => b[key]) ?? [];

  return (
    <>
      <PageTitle>Overview</PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Overview range">
        <BotSelect bots={bots ?? []} value={chatbot} onChange={setChatbot} any="All chatbots" />
        <Field label="Range">
          <select value={days} onChange={(e) => setDays((e.target as HTMLSelectElement).value as keyof typeof RANGES)}>
            {Object.entries(RANGES).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
      </form>
      <Notice error={overview.error || unanswered.error} />
      {!data && !overview.error && <Loading />}
      {data && (
        <>
          <dl class="totals">
            {(
              [
                ["Conversations", data.totals.conversations],
                ["Visitor messages", data.totals.visitor_messages],
                ["Answered", data.totals.answered],
                ["Could not answer", data.totals.cannot_answer],
                ["Rated good", data.totals.good_ratings],
                ["Rated bad", data.totals.bad_ratings],
                ["Leads", data.totals.leads],
              ] as const
            ).map(([label, value]) => (
              <div key={label} class="card total">
                <dt>{label}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
          <div class="charts">
            <BarChart title="Conversations" labels={labels} series={[{ name: "Conversations", color: "--chart-1", values: pick("conversations") }]} />
            <BarChart
              title="Answered and could not answer"
              labels={labels}
              series={[
                { name: "Answered", color: "--chart-good", values: pick("answered") },
                { name: "Could not answer", color: "--chart-bad", values: pick("cannot_answer") },
              ]}
            />
            <BarChart
              title="Ratings"
              labels={labels}
              series={[
                { name: "Good", color: "--chart-good", values: pick("good_ratings") },
                { name: "Bad", color: "--chart-bad", values: pick("bad_ratings") },
              ]}
            />
            <BarChart title="Leads" labels={labels} series={[{ name: "Leads", color: "--chart-2", values: pick("leads") }]} />
          </div>
        </>
      )}
      <section aria-labelledby="unanswered">
        <h2 id="unanswered">Top unanswered questions</h2>
        {unanswered.data && unanswered.data.length === 0 && <Empty>Every question in this range was answered, and no reply was rated bad.</Empty>}
        {unanswered.data && unanswered.data.length > 0 && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Question</th>
                  <th scope="col" class="num">Times</th>
                  <th scope="col" class="num">Could not answer</th>
                  <th scope="col" class="num">Rated bad</th>
                  <th scope="col">Last asked</th>
                </tr>
              </thead>
              <tbody>
                {unanswered.data.map((q) => (
                  <tr key={q.example_conversation_id + q.question}>
                    <td>
                      <a href={`#/conversations/${q.example_conversation_id}`}>{q.question}</a>
                    </td>
                    <td class="num">{q.count}</td>
                    <td class="num">{q.cannot_answer}</td>
                    <td class="num">{q.bad_ratings}</td>
                    <td>{formatDate(q.last_asked_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}
