import { useState } from "preact/hooks";
import { call, query } from "../api.js";
import { BotSelect, Empty, Field, Loading, Notice, PageTitle, formatDate, useAction, useLoad } from "../ui.js";
import type { Bot } from "./chatbots.js";
import type { Correction } from "./corrections.js";

interface Conversation {
  id: number;
  status: "active" | "human" | "ended";
  source: string;
  agent: { id: number; name: string; slug?: string };
  visitor: { name: string | null; email: string | null; ip: string | null; country: string | null };
  started_at: string;
  last_message_at: string;
  message_count: number;
  is_ended: boolean;
}

interface Message {
  id: number;
  role: "user" | "assistant" | "agent";
  content: string;
  sources: { name?: string; title?: string; url?: string | null }[];
  rating?: "good" | "bad" | null;
  created_at: string;
}

/** A date input's day as the API's inclusive bounds (local midnight to the day's last millisecond). */
const dayStart = (day: string) => (day ? new Date(`${day}T00:00:00`).toISOString() : undefined);
const dayEnd = (day: string) => (day ? new Date(new Date(`${day}T00:00:00`).getTime() + 86_399_999).toISOString() : undefined);

export function ConversationsPage() {
  const { data: bots } = useLoad(async () => (await call<Bot[]>("chatbots")).data);
  const [filters, setFilters] = useState({ chatbot: "", status: "", rating: "", q: "", since: "", until: "" });
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(1);
  const { data, error } = useLoad(
    () =>
      call<Conversation[]>(
        `v1/conversations${query({ chatbot: filters.chatbot, status: filters.status, rating: filters.rating, q: filters.q, since: dayStart(filters.since), until: dayEnd(filters.until), page, per_page: 25 })}`,
      ),
    [filters, page],
  );
  const set = (key: keyof typeof filters, value: string) => (setPage(1), setFilters({ ...filters, [key]: value }));

  return (
    <>
      <PageTitle
        actions={
          <a
            class="button secondary"
            href={`api/v1/conversations/export${query({ format: "csv", chatbot: filters.chatbot, since: dayStart(filters.since), until: dayEnd(filters.until) })}`}
            download="conversations.csv"
          >
            Export CSV
          </a>
        }
      >
        Conversations
      </PageTitle>
      <form class="filters" onSubmit={(e) => (e.preventDefault(), set("q", search.trim()))} aria-label="Filter conversations">
        <Field label="Search messages">
          <input type="search" value={search} maxLength={200} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} onChange={() => set("q", search.trim())} />
        </Field>
        <BotSelect bots={bots ?? []} value={filters.chatbot} onChange={(v) => set("chatbot", v)} any="All chatbots" />
        <Field label="Status">
          <select value={filters.status} onChange={(e) => set("status", (e.target as HTMLSelectElement).value)}>
            <option value="">Any</option>
            <option value="active">Active</option>
            <option value="human">With an agent</option>
            <option value="ended">Ended</option>
          </select>
        </Field>
        <Field label="Rating">
          <select value={filters.rating} onChange={(e) => set("rating", (e.target as HTMLSelectElement).value)}>
            <option value="">Any</option>
            <option value="good">Rated good</option>
            <option value="bad">Rated bad</option>
            <option value="unrated">Unrated</option>
          </select>
        </Field>
        <Field label="From">
          <input type="date" value={filters.since} onChange={(e) => set("since", (e.target as HTMLInputElement).value)} />
        </Field>
        <Field label="To">
          <input type="date" value={filters.until} onChange={(e) => set("until", (e.target as HTMLInputElement).value)} />
        </Field>
      </form>
      <Notice error={error} />
      {!data && !error && <Loading />}
      {data && data.data.length === 0 && <Empty>No conversations match.</Empty>}
      {data && data.data.length > 0 && (
        <>
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Conversations, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Chatbot</th>
                  <th scope="col">Visitor</th>
                  <th scope="col" class="num">Messages</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {data.data.map((c) => (
                  <tr key={c.id}>
                    <td>
                      <a href={`#/conversations/${c.id}`}>{formatDate(c.started_at)}</a>
                    </td>
                    <td>{c.agent.name}</td>
                    <td>{c.visitor.name ?? c.visitor.email ?? <span class="muted">anonymous</span>}</td>
                    <td class="num">{c.message_count}</td>
                    <td>
                      <span class={`badge ${c.is_ended ? "muted" : c.status === "human" ? "bad" : "good"}`}>{c.status === "human" ? "with an agent" : c.status}</span>
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

export function Pager({ meta, onPage }: { meta?: Record<string, any>; onPage: (page: number) => void }) {
  if (!meta || meta.last_page <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled={meta.current_page <= 1} onClick={() => onPage(meta.current_page - 1)}>
        Previous
      </button>
      <span>
        Page {meta.current_page} of {meta.last_page} ({meta.total})
      </span>
      <button type="button" class="secondary" disabled={meta.current_page >= meta.last_page} onClick={() => onPage(meta.current_page + 1)}>
        Next
      </button>
    </nav>
  );
}

export function TranscriptPage({ id }: { id: number }) {
  const { data: conversation, error, reload } = useLoad(async () => (await call<Conversation & { messages: Message[] }>(`v1/conversations/${id}`)).data, [id]);
  const end = useAction();
  const [reply, setReply] = useState("");
  if (error) return <Notice error={error} />;
  if (!conversation) return <Loading />;
  return (
    <>
      <PageTitle
        actions={
          <>
            <a href="#/conversations">All conversations</a>
            {!conversation.is_ended && conversation.status === "active" && (
              <button type="button" disabled={end.busy} onClick={() => end.run(async () => (await call(`v1/conversations/${id}/handoff`, { method: "POST", json: { reason: "Taken over in the console" } }), reload()))}>
                Take over
              </button>
            )}
            {conversation.status === "human" && (
              <button type="button" class="secondary" disabled={end.busy} onClick={() => end.run(async () => (await call(`v1/conversations/${id}/release`, { method: "POST" }), reload()))}>
                Hand back to the bot
              </button>
            )}
            {!conversation.is_ended && (
              <button type="button" class="secondary" disabled={end.busy} onClick={() => end.run(async () => (await call(`v1/conversations/${id}/end`, { method: "POST" }), reload()))}>
                End conversation
              </button>
            )}
          </>
        }
      >
        Conversation {id}
      </PageTitle>
      <Notice error={end.error} />
      <dl class="facts">
        <dt>Chatbot</dt>
        <dd>{conversation.agent.name}</dd>
        <dt>Visitor</dt>
        <dd>{[conversation.visitor.name, conversation.visitor.email, conversation.visitor.country].filter(Boolean).join(" · ") || "anonymous"}</dd>
        <dt>Started</dt>
        <dd>{formatDate(conversation.started_at)}</dd>
        <dt>Status</dt>
        <dd>{conversation.status}</dd>
      </dl>
      <ol class="transcript">
        {conversation.messages.map((m) => (
          <li key={m.id} class={`msg ${m.role}`}>
            <div class="msg-meta">
              {m.role === "user" ? "Visitor" : m.role === "agent" ? "Agent" : "Assistant"} · <time dateTime={m.created_at}>{formatDate(m.created_at)}</time>
              {m.rating && <span class={`badge ${m.rating === "good" ? "good" : "bad"}`}>rated {m.rating}</span>}
            </div>
            {/* Assistant content is the server's sanitised HTML; visitor text is plain and escaped by Preact. */}
            {m.role !== "user" ? <div class="msg-body" dangerouslySetInnerHTML={{ __html: m.content }} /> : <div class="msg-body">{m.content}</div>}
            {m.role === "assistant" && <ImproveAnswer conversation={conversation} message={m} />}
            {m.sources.length > 0 && (
              <details class="sources">
                <summary>{m.sources.length} sources</summary>
                <ul>
                  {m.sources.map((s, i) => (
                    <li key={i}>{s.url ? <a href={s.url} target="_blank" rel="noopener noreferrer">{s.title ?? s.name ?? s.url}</a> : (s.title ?? s.name)}</li>
                  ))}
                </ul>
              </details>
            )}
          </li>
        ))}
      </ol>
      {conversation.status === "human" && (
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            end.run(async () => {
              await call(`v1/conversations/${id}/messages`, { method: "POST", json: { role: "agent", message: reply.trim() } });
              setReply("");
              reload();
            });
          }}
        >
          <Field label="Reply as an agent" hint="The visitor sees it in the widget; the bot stays silent until you hand the conversation back.">
            <textarea rows={3} value={reply} onInput={(e) => setReply((e.target as HTMLTextAreaElement).value)} required maxLength={10000} />
          </Field>
          <button type="submit" disabled={end.busy}>
            Send reply
          </button>
        </form>
      )}
    </>
  );
}

/**
 * "Improve this answer": a better answer for a reply becomes a correction of the chatbot, whose
 * question is the visitor message the reply answered (the API's correct-from-message route);
 * later questions like it get the corrected answer. Offered on every reply, first on badly rated ones.
 */
function ImproveAnswer({ conversation, message }: { conversation: Conversation; message: Message }) {
  const [open, setOpen] = useState(false);
  const [answer, setAnswer] = useState("");
  const [made, setMade] = useState<Correction | null>(null);
  const action = useAction();
  const slug = conversation.agent.slug ?? "";
  if (made) {
    return (
      <div class="notice ok" role="status">
        Correction saved: questions like “{made.question}” now get your answer.{" "}
        <a href={`#/corrections/${encodeURIComponent(slug)}/${made.id}`}>See it in Corrections</a>
      </div>
    );
  }
  if (!open) {
    return (
      <button type="button" class={message.rating === "bad" ? "small" : "small secondary"} onClick={() => setOpen(true)}>
        Improve this answer
      </button>
    );
  }
  return (
    <form
      class="improve"
      onSubmit={(e) => {
        e.preventDefault();
        action.run(async () => {
          const created = (await call<Correction>(`v1/conversations/${conversation.id}/messages/${message.id}/correct`, { method: "POST", json: { answer } })).data;
          setMade(created);
        });
      }}
    >
      <Field label="Better answer" hint="Markdown. Saved as a correction: the next visitor asking this gets it instead of a model reply.">
        <textarea rows={4} value={answer} onInput={(e) => setAnswer((e.target as HTMLTextAreaElement).value)} required maxLength={10000} />
      </Field>
      <Notice error={action.error} />
      <button type="submit" disabled={action.busy || !answer.trim()}>
        Save correction
      </button>{" "}
      <button type="button" class="secondary" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}
