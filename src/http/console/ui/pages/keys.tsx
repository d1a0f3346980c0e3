import { useState } from "preact/hooks";
import { call } from "../api.js";
import { Empty, Field, Loading, Notice, PageTitle, formatDate, useAction, useLoad } from "../ui.js";

interface Key {
  id: number;
  email: string;
  name: string;
  prefix: string;
  status: "active" | "disabled" | "expired";
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export function KeysPage() {
  const { data, error, reload } = useLoad(() => call<Key[]>("keys"));
  const action = useAction();
  const [name, setName] = useState("");
  const [expires, setExpires] = useState("");
  const [accepted, setAccepted] = useState(false);
  const [shown, setShown] = useState<{ name: string; key: string } | null>(null);
  const notice: string = data?.meta?.attribution_notice ?? "";

  const act = (path: string, init: { method?: string; json?: unknown } = { method: "POST" }) =>
    action.run(async () => {
      const answer = await call<Key & { key?: string }>(path, init);
      if (answer.data?.key) setShown({ name: answer.data.name, key: answer.data.key });
      reload();
    });

  return (
    <>
      <PageTitle>API keys</PageTitle>
      <Notice error={error || action.error} />
      {shown && (
        <div class="notice ok shown-once" role="status">
          <p>
            The key <strong>{shown.name}</strong>, shown only now: copy it to your server's configuration.
          </p>
          <code class="secret" data-testid="new-key">
            {shown.key}
          </code>
          <button type="button" class="link" onClick={() => setShown(null)}>
            I have copied it
          </button>
        </div>
      )}
      {!data && !error && <Loading />}
      {data && data.data.length === 0 && <Empty>No keys.</Empty>}
      {data && data.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">API keys of your organisation (their first characters only)</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Owner</th>
                <th scope="col">Status</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((key) => (
                <tr key={key.id} data-key-id={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.prefix}…</code>
                  </td>
                  <td>{key.email}</td>
                  <td>
                    <span class={`badge ${key.status === "active" ? "good" : "muted"}`}>{key.status}</span>
                  </td>
                  <td>{formatDate(key.last_used_at)}</td>
                  <td>{key.expires_at ? formatDate(key.expires_at) : "never"}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="secondary"
                      disabled={action.busy}
                      onClick={() => {
                        const next = prompt("New name of the key", key.name);
                        if (next && next.trim()) act(`keys/${key.id}/rename`, { method: "POST", json: { name: next.trim() } });
                      }}
                    >
                      Rename <span class="sr-only">{key.name}</span>
                    </button>
                    {key.status === "disabled" ? (
                      <button type="button" class="secondary" disabled={action.busy} onClick={() => act(`keys/${key.id}/enable`)}>
                        Enable <span class="sr-only">{key.name}</span>
                      </button>
                    ) : (
                      <button type="button" class="secondary" disabled={action.busy} onClick={() => act(`keys/${key.id}/disable`)}>
                        Disable <span class="sr-only">{key.name}</span>
                      </button>
                    )}
                    <button
                      type="button"
                      class="secondary"
                      disabled={action.busy}
                      onClick={() => confirm(`Regenerate ${key.name}? The current secret stops working at once.`) && act(`keys/${key.id}/regenerate`)}
                    >
                      Regenerate <span class="sr-only">{key.name}</span>
                    </button>
                    <button
                      type="button"
                      class="danger"
                      disabled={action.busy}
                      onClick={() => confirm(`Delete ${key.name} permanently?`) && act(`keys/${key.id}`, { method: "DELETE" })}
                    >
                      Delete <span class="sr-only">{key.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section class="card" aria-labelledby="new-key">
        <h2 id="new-key">Create a key</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            act("keys", { method: "POST", json: { name: name.trim(), expires_at: expires || null, accept_attribution: accepted } });
            setName("");
            setAccepted(false);
          }}
        >
          <Field label="Name">
            <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required maxLength={100} />
          </Field>
          <Field label="Expires" hint="Optional: the key works through that day (UTC).">
            <input type="date" value={expires} onInput={(e) => setExpires((e.target as HTMLInputElement).value)} />
          </Field>
          <p class="attribution">{notice}</p>
          <label class="check">
            <input type="checkbox" checked={accepted} onChange={(e) => setAccepted((e.target as HTMLInputElement).checked)} required /> I accept the attribution obligation
          </label>
          <button type="submit" disabled={action.busy}>
            Create key
          </button>
        </form>
      </section>
    </>
  );
}
