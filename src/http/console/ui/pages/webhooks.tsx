import { useState } from "preact/hooks";
import { call } from "../api.js";
import { Empty, Field, Loading, Notice, PageTitle, formatDate, useAction, useLoad } from "../ui.js";

interface Webhook {
  id: number;
  name: string;
  url: string;
  events: string[];
  is_active: boolean;
  total_triggers: number;
  failed_triggers: number;
  last_triggered_at: string | null;
  last_failure: { at: string; status: number | null; error: string } | null;
}

interface TestOutcome {
  delivered: boolean;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

const EVENTS = ["conversation_started", "message_received", "conversation_ended", "lead_captured", "budget_exhausted"];

export function WebhooksPage() {
  const { data: hooks, error, reload } = useLoad(async () => (await call<Webhook[]>("v1/webhooks")).data);
  const action = useAction();
  const [url, setUrl] = useState("");
  const [name, setName] = useState("");
  const [events, setEvents] = useState<string[]>(["lead_captured"]);
  const [secret, setSecret] = useState<string | null>(null);
  const [tests, setTests] = useState<Record<number, TestOutcome | "sending">>({});
  const sendTest = async (id: number) => {
    setTests((t) => ({ ...t, [id]: "sending" }));
    const outcome = await action.run(async () => (await call<TestOutcome>(`v1/webhooks/${id}/test`, { method: "POST" })).data);
    setTests((t) => {
      const { [id]: _, ...rest } = t;
      return outcome ? { ...rest, [id]: outcome } : rest;
    });
  };

  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <Notice error={error || action.error} />
      {secret && (
        <div class="notice ok shown-once" role="status">
          <p>Signing secret of the new webhook, shown only now: verify deliveries with it.</p>
          <code class="secret">{secret}</code>
        </div>
      )}
      {!hooks && !error && <Loading />}
      {hooks && hooks.length === 0 && <Empty>No webhooks yet.</Empty>}
      {hooks && hooks.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Webhooks with their delivery statistics</caption>
            <thead>
              <tr>
                <th scope="col">Webhook</th>
                <th scope="col">Events</th>
                <th scope="col" class="num">Sent</th>
                <th scope="col" class="num">Failed</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Last failure</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {hooks.map((hook) => (
                <tr key={hook.id}>
                  <td>
                    <strong>{hook.name}</strong> {!hook.is_active && <span class="badge muted">inactive</span>}
                    <div class="hint break">{hook.url}</div>
                  </td>
                  <td>{hook.events.join(", ")}</td>
                  <td class="num">{hook.total_triggers}</td>
                  <td class="num">{hook.failed_triggers}</td>
                  <td>{formatDate(hook.last_triggered_at)}</td>
                  <td>{hook.last_failure ? `${formatDate(hook.last_failure.at)}: ${hook.last_failure.error}` : "—"}</td>
                  <td class="row-actions">
                    <button type="button" class="secondary" disabled={tests[hook.id] === "sending"} onClick={() => sendTest(hook.id)}>
                      Send a test event <span class="sr-only">to {hook.name}</span>
                    </button>
                    <TestResult outcome={tests[hook.id]} />
                    <button
                      type="button"
                      class="danger"
                      disabled={action.busy}
                      onClick={() => confirm(`Delete the webhook ${hook.name}?`) && action.run(async () => (await call(`v1/webhooks/${hook.id}`, { method: "DELETE" }), reload()))}
                    >
                      Delete <span class="sr-only">{hook.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section class="card" aria-labelledby="new-hook">
        <h2 id="new-hook">Add a webhook</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            action.run(async () => {
              const created = (await call<{ secret?: string }>("v1/webhooks", { method: "POST", json: { url: url.trim(), events, ...(name.trim() && { name: name.trim() }) } })).data;
              setSecret(created.secret ?? null);
              setUrl("");
              setName("");
              reload();
            });
          }}
        >
          <Field label="URL">
            <input type="url" value={url} onInput={(e) => setUrl((e.target as HTMLInputElement).value)} required placeholder="https://example.com/hooks/chatsvc" />
          </Field>
          <Field label="Name" hint="Defaults to the URL's host.">
            <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} maxLength={100} />
          </Field>
          <fieldset>
            <legend>Events</legend>
            {EVENTS.map((event) => (
              <label class="check" key={event}>
                <input
                  type="checkbox"
                  checked={events.includes(event)}
                  onChange={(e) => setEvents((e.target as HTMLInputElement).checked ? [...events, event] : events.filter((x) => x !== event))}
                />{" "}
                {event}
              </label>
            ))}
          </fieldset>
          <button type="submit" disabled={action.busy || events.length === 0}>
            Add webhook
          </button>
        </form>
      </section>
    </>
  );
}

/** What the last test event to a webhook came to, announced when it arrives. */
function TestResult({ outcome }: { outcome: TestOutcome | "sending" | undefined }) {
  if (!outcome) return null;
  if (outcome === "sending")
    return (
      <span class="test-outcome" role="status">
        Sending…
      </span>
    );
  return (
    <span class={`test-outcome badge ${outcome.delivered ? "good" : "bad"}`} role="status">
      {outcome.delivered ? `Delivered: HTTP ${outcome.status} in ${outcome.duration_ms} ms` : `Not delivered: ${outcome.error ?? "no answer"}`}
    </span>
  );
}
