import { useState } from "preact/hooks";
import { call } from "../api.js";
import { BotSelect, Empty, Field, Loading, Notice, PageTitle, formatBytes, formatDate, useAction, useLoad } from "../ui.js";
import type { Bot } from "./chatbots.js";

interface Doc {
  id: number;
  name: string;
  type: string;
  source: string;
  url: string | null;
  chunk_count: number;
  bytes: number;
  created_at: string;
  updated_at: string;
}

interface Job {
  name: string;
  state: "waiting" | "ingesting" | "done" | "failed";
  detail?: string;
}

/** What re-fetching the chatbot's web documents did (the service's SyncReport). */
interface SyncReport {
  checked: number;
  unchanged: number;
  added: { url: string }[];
  updated: { url: string }[];
  removed: { url: string }[];
  failed: { url: string; error: string }[];
}

const ACCEPT = ".md,.markdown,.txt,.html,.htm,.json";
// The server takes JSON bodies up to 1 MB; the file's text must fit with its name.
const MAX_FILE = 900_000;

export function KnowledgePage({ slug }: { slug?: string }) {
  const { data: bots, error } = useLoad(async () => (await call<Bot[]>("chatbots")).data);
  if (error) return <Notice error={error} />;
  if (!bots) return <Loading />;
  if (bots.length === 0) return <Empty>Create a chatbot first.</Empty>;
  const current = slug && bots.some((b) => b.slug === slug) ? slug : bots[0]!.slug;
  return <Knowledge bots={bots} slug={current} />;
}

function Knowledge({ bots, slug }: { bots: Bot[]; slug: string }) {
  const { data: docs, error, reload } = useLoad(async () => (await call<Doc[]>(`chatbots/${slug}/documents`)).data, [slug]);
  const action = useAction();
  const [jobs, setJobs] = useState<Job[]>([]);
  const [url, setUrl] = useState("");
  const [dragging, setDragging] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const running = jobs.some((j) => j.state === "waiting" || j.state === "ingesting");

  /** One file per request, in turn: each shows its own state, and a failure leaves the rest going. */
  const upload = async (files: File[]) => {
    setNotice(null);
    const queue: Job[] = files.map((f) => ({ name: f.name, state: "waiting" }));
    setJobs(queue);
    const update = (i: number, job: Partial<Job>) => {
      queue[i] = { ...queue[i]!, ...job };
      setJobs([...queue]);
    };
    for (const [i, file] of files.entries()) {
      update(i, { state: "ingesting" });
      try {
        if (file.size > MAX_FILE) throw new Error(`larger than ${formatBytes(MAX_FILE)}: use chatsvc ingest on the server`);
        const report = (await call(`chatbots/${slug}/documents`, { method: "POST", json: { files: [{ name: file.name, content: await file.text() }] } })).data;
        if (report.failed.length > 0) throw new Error(report.failed[0].error);
        update(i, { state: "done", detail: report.added + report.updated > 0 ? `${report.chunks} chunks` : "unchanged" });
      } catch (e) {
        update(i, { state: "failed", detail: (e as Error).message });
      }
      reload();
    }
  };

  return (
    <>
      <PageTitle
        actions={
          <>
            <button
              type="button"
              class="secondary"
              disabled={action.busy}
              onClick={() => action.run(async () => setNotice(`Reindexed ${(await call(`chatbots/${slug}/reindex`, { method: "POST" })).data.chunks} chunks.`))}
            >
              Reindex
            </button>
            <button
              type="button"
              class="secondary"
              disabled={action.busy}
              onClick={() =>
                action.run(async () => {
                  const r = (await call<SyncReport>(`chatbots/${slug}/sync`, { method: "POST" })).data;
                  setNotice(`Re-synced ${r.checked} web pages: ${r.updated.length} updated, ${r.added.length} added, ${r.removed.length} removed, ${r.unchanged} unchanged${r.failed.length > 0 ? `, ${r.failed.length} failed (${r.failed[0]!.url}: ${r.failed[0]!.error})` : ""}.`);
                  reload();
                })
              }
            >
              Re-sync web pages
            </button>
          </>
        }
      >
        Knowledge
      </PageTitle>
      <BotSelect bots={bots} value={slug} onChange={(s) => (location.hash = `#/knowledge/${s}`)} />
      <Notice error={error || action.error} ok={notice} />
      <section class="card" aria-labelledby="add-docs">
        <h2 id="add-docs">Add documents</h2>
        <div
          class={`dropzone ${dragging ? "over" : ""}`}
          onDragOver={(e) => (e.preventDefault(), setDragging(true))}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            if (!running) upload(Array.from(e.dataTransfer?.files ?? []));
          }}
        >
          <p>Drop Markdown, text, HTML or JSON files here, or</p>
          <label class="button secondary">
            Choose files
            <input
              type="file"
              class="sr-only"
              multiple
              accept={ACCEPT}
              disabled={running}
              onChange={(e) => {
                const input = e.target as HTMLInputElement;
                upload(Array.from(input.files ?? []));
                input.value = "";
              }}
            />
          </label>
        </div>
        {jobs.length > 0 && (
          <div class="jobs">
            <progress max={jobs.length} value={jobs.filter((j) => j.state === "done" || j.state === "failed").length} aria-label="Ingestion progress" />
            <ul aria-live="polite">
              {jobs.map((job, i) => (
                <li key={i} class={`job ${job.state}`}>
                  <span>{job.name}</span> <span class="badge">{job.state}</span> {job.detail && <span class="hint">{job.detail}</span>}
                </li>
              ))}
            </ul>
          </div>
        )}
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            action.run(async () => {
              setNotice(null);
              const report = (await call(`chatbots/${slug}/documents`, { method: "POST", json: { url: url.trim() } })).data;
              if (report.failed.length > 0) throw new Error(`${report.failed[0].input}: ${report.failed[0].error}`);
              setNotice(report.added + report.updated > 0 ? `Added ${url.trim()} (${report.chunks} chunks).` : `${url.trim()} is unchanged.`);
              setUrl("");
              reload();
            });
          }}
        >
          <Field label="Web page URL">
            <input type="url" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} placeholder="https://example.com/docs/page" required />
          </Field>
          <button type="submit" disabled={action.busy}>
            {action.busy ? "Fetching…" : "Add URL"}
          </button>
        </form>
      </section>
      {!docs && !error && <Loading />}
      {docs && docs.length === 0 && <Empty>No documents yet: the chatbot answers every question with its fallback message.</Empty>}
      {docs && docs.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Documents of {slug}</caption>
            <thead>
              <tr>
                <th scope="col">Document</th>
                <th scope="col">Type</th>
                <th scope="col" class="num">Size</th>
                <th scope="col" class="num">Chunks</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {docs.map((doc) => (
                <tr key={doc.id}>
                  <td>{doc.url ? <a href={doc.url} target="_blank" rel="noopener noreferrer">{doc.name}</a> : doc.name}</td>
                  <td>{doc.type}</td>
                  <td class="num">{formatBytes(doc.bytes)}</td>
                  <td class="num">{doc.chunk_count}</td>
                  <td>{formatDate(doc.updated_at)}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="danger"
                      disabled={action.busy}
                      onClick={() => confirm(`Remove ${doc.name} from the knowledge base?`) && action.run(async () => (await call(`chatbots/${slug}/documents/${doc.id}`, { method: "DELETE" }), reload()))}
                    >
                      Remove <span class="sr-only">{doc.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
