import { useState } from "preact/hooks";
import { call, query } from "../api.js";
import { BotSelect, Empty, Field, Loading, Notice, PageTitle, formatDate, useLoad } from "../ui.js";
import type { Bot } from "./chatbots.js";
import { Pager } from "./conversations.js";

interface Lead {
  id: number;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  message: string | null;
  agent: { name: string };
  conversation_id: number;
  created_at: string;
}

const dayStart = (day: string) => (day ? new Date(`${day}T00:00:00`).toISOString() : undefined);
const dayEnd = (day: string) => (day ? new Date(new Date(`${day}T00:00:00`).getTime() + 86_399_999).toISOString() : undefined);

export function LeadsPage() {
  const { data: bots } = useLoad(async () => (await call<Bot[]>("chatbots")).data);
  const [filters, setFilters] = useState({ chatbot: "", since: "", until: "" });
  const [page, setPage] = useState(1);
  const { data, error } = useLoad(
    () => call<Lead[]>(`v1/leads${query({ chatbot: filters.chatbot, since: dayStart(filters.since), until: dayEnd(filters.until), page, per_page: 25 })}`),
    [filters, page],
  );
  const set = (key: keyof typeof filters, value: string) => (setPage(1), setFilters({ ...filters, [key]: value }));

  return (
    <>
      <PageTitle
        actions={
          // A plain download: the browser sends the session cookie with this same-origin GET.
          <a class="button secondary" href={`api/v1/leads/export${query({ format: "csv", chatbot: filters.chatbot, since: dayStart(filters.since), until: dayEnd(filters.until) })}`} download="leads.csv">
            Export CSV
          </a>
        }
      >
        Leads
      </PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter leads">
        <BotSelect bots={bots ?? []} value={filters.chatbot} onChange={(v) => set("chatbot", v)} any="All chatbots" />
        <Field label="From">
          <input type="date" value={filters.since} onChange={(e) => set("since", (e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="To">
          <input type="date" value={filters.until} onChange={(e) => set("until", (e.target as HTMLInputElement).value)} />
        </Field>
      </form>
      <Notice error={error} />
      {!data && !error && <Loading />}
      {data && data.data.length === 0 && <Empty>No leads match.</Empty>}
      {data && data.data.length > 0 && (
        <>
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Leads, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Captured</th>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Phone</th>
                  <th scope="col">Company</th>
                  <th scope="col">Chatbot</th>
                  <th scope="col">Conversation</th>
                </tr>
              </thead>
              <tbody>
                {data.data.map((lead) => (
                  <tr key={lead.id}>
                    <td>{formatDate(lead.created_at)}</td>
                    <td>{lead.name ?? "—"}</td>
                    <td>{lead.email ? <a href={`mailto:${lead.email}`}>{lead.email}</a> : "—"}</td>
                    <td>{lead.phone ?? "—"}</td>
                    <td>{lead.company ?? "—"}</td>
                    <td>{lead.agent.name}</td>
                    <td>
                      <a href={`#/conversations/${lead.conversation_id}`}>#{lead.conversation_id}</a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager meta={data.meta} onPage={setPage} />
        </>
      )}
    </>
  );
}
