import { useEffect, useState } from "preact/hooks";
import { call } from "../api.js";
import { BotSelect, Empty, Field, Loading, Notice, PageTitle, formatDate, useAction, useLoad } from "../ui.js";
import type { Bot } from "./chatbots.js";
import { Pager } from "./conversations.js";

export interface Correction {
  id: number;
  question: string;
  answer: string;
  source_name: string | null;
  source_url: string | null;
  created_at: string;
  updated_at: string;
}

interface Draft {
  question: string;
  answer: string;
  source_name: string;
  source_url: string;
}

const EMPTY: Draft = { question: "", answer: "", source_name: "", source_url: "" };

/**
 * A chatbot's answer corrections: a visitor question matching `question` gets `answer`, with no
 * model call. Listed newest first; added, edited and deleted here through the API's corrections routes.
 * `highlight` (from "Improve this answer" in a transcript) marks the correction just made.
 */
export function CorrectionsPage({ slug, highlight }: { slug?: string; highlight?: number }) {
  const { data: bots, error: botsError } = useLoad(async () => (await call<Bot[]>("chatbots")).data);
  const current = slug ?? bots?.[0]?.slug;
  const [page, setPage] = useState(1);
  const { data, error, reload } = useLoad(
    async () => (current ? call<Correction[]>(`v1/chatbots/${encodeURIComponent(current)}/corrections?page=${page}&per_page=25`) : undefined),
    [current, page],
  );
  const action = useAction();
  const [editing, setEditing] = useState<number | null>(null);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [done, setDone] = useState<string | null>(null);
  useEffect(() => (setEditing(null), setDraft(EMPTY), setPage(1)), [current]);

  const edit = (c: Correction) => {
    setDone(null);
    setEditing(c.id);
    setDraft({ question: c.question, answer: c.answer, source_name: c.source_name ?? "", source_url: c.source_url ?? "" });
    document.getElementById("correction-form")?.scrollIntoView({ block: "nearest" });
  };
  const submit = (e: Event) => {
    e.preventDefault();
    action.run(async () => {
      const base = `v1/chatbots/${encodeURIComponent(current!)}/corrections`;
      const json = { question: draft.question.trim(), answer: draft.answer, source_name: draft.source_name.trim() || null, source_url: draft.source_url.trim() || null };
      if (editing === null) await call(base, { method: "POST", json });
      else await call(`${base}/${editing}`, { method: "PUT", json });
      setDone(editing === null ? "Correction added." : "Correction saved.");
      setEditing(null);
      setDraft(EMPTY);
      reload();
    });
  };
  const set = (key: keyof Draft) => (e: Event) => setDraft({ ...draft, [key]: (e.target as HTMLInputElement | HTMLTextAreaElement).value });

  return (
    <>
      <PageTitle>Corrections</PageTitle>
      <p class="hint">A visitor question that matches a correction's question (the same words, their inflections or related words, in any order) is answered with its answer, without calling the model.</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Choose a chatbot">
        <BotSelect bots={bots ?? []} value={current ?? ""} onChange={(s) => (location.hash = `#/corrections/${encodeURIComponent(s)}`)} />
      </form>
      <Notice error={botsError || error || action.error} ok={done} />
      {bots && bots.length === 0 && <Empty>No chatbots yet.</Empty>}
      {current && !data && !error && <Loading />}
      {data && data.data.length === 0 && <Empty>No corrections for this chatbot yet.</Empty>}
      {data && data.data.length > 0 && (
        <>
          <div class="table-wrap">
            <table>
              <caption class="sr-only">Corrections of {current}, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Question</th>
                  <th scope="col">Answer</th>
                  <th scope="col">Updated</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.data.map((c) => (
                  <tr key={c.id} class={c.id === highlight ? "highlight" : undefined} aria-current={c.id === highlight ? "true" : undefined}>
                    <td>{c.question}</td>
                    <td class="pre">
                      {c.answer}
                      {c.source_name && <div class="hint">Source: {c.source_name}</div>}
                    </td>
                    <td>{formatDate(c.updated_at)}</td>
                    <td class="row-actions">
                      <button type="button" class="secondary" onClick={() => edit(c)}>
                        Edit <span class="sr-only">{c.question}</span>
                      </button>
                      <button
                        type="button"
                        class="danger"
                        disabled={action.busy}
                        onClick={() =>
                          confirm(`Delete the correction for "${c.question}"?`) &&
                          action.run(async () => (await call(`v1/chatbots/${encodeURIComponent(current!)}/corrections/${c.id}`, { method: "DELETE" }), setDone("Correction deleted."), reload()))
                        }
                      >
                        Delete <span class="sr-only">{c.question}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager meta={data.meta} onPage={setPage} />
        </>
      )}
      {current && (
        <section class="card" aria-labelledby="correction-form-title" id="correction-form">
          <h2 id="correction-form-title">{editing === null ? "Add a correction" : "Edit the correction"}</h2>
          <form onSubmit={submit}>
            <Field label="Question" hint="As a visitor would ask it.">
              <input value={draft.question} onInput={set("question")} required maxLength={10000} />
            </Field>
            <Field label="Answer" hint="Markdown; shown like any reply.">
              <textarea rows={4} value={draft.answer} onInput={set("answer")} required maxLength={10000} />
            </Field>
            <div class="grid-2">
              <Field label="Source name" hint="Optional: names the correction in the reply's sources.">
                <input value={draft.source_name} onInput={set("source_name")} maxLength={255} />
              </Field>
              <Field label="Source URL" hint="Optional.">
                <input type="url" value={draft.source_url} onInput={set("source_url")} maxLength={2048} />
              </Field>
            </div>
            <button type="submit" disabled={action.busy}>
              {editing === null ? "Add correction" : "Save correction"}
            </button>
            {editing !== null && (
              <button type="button" class="secondary" onClick={() => (setEditing(null), setDraft(EMPTY))}>
                Cancel
              </button>
            )}
          </form>
        </section>
      )}
    </>
  );
}
