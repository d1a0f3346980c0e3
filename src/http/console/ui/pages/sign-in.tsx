import { useEffect, useState } from "preact/hooks";
import { call } from "../api.js";
import type { Me } from "../main.js";
import { Field, Notice, useAction } from "../ui.js";

/** Sign-in: a one-time link (its token arrives in the URL's hash, never sent to the server in a URL) or a pasted API key. */
export function SignIn({ token, onSignedIn }: { token?: string; onSignedIn: (me: Me) => void }) {
  const { busy, error, run } = useAction();
  const [apiKey, setApiKey] = useState("");
  const finish = async (json: unknown) => {
    await call("session", { method: "POST", json });
    // The sign-in answer carries no organisation name: ask who we are.
    onSignedIn((await call<Me>("session")).data);
  };
  useEffect(() => {
    if (token) run(() => finish({ token }));
  }, [token]);

  return (
    <main class="sign-in" id="main">
      <h1>chatsvc console</h1>
      {token && busy && <p role="status">Signing you in…</p>}
      <Notice error={error} />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          run(() => finish({ api_key: apiKey.trim() }));
        }}
      >
        <Field label="API key" hint="Used once to start a session; the console never stores it.">
          <input type="password" autoComplete="off" value={apiKey} onInput={(e) => setApiKey((e.target as HTMLInputElement).value)} required placeholder="sk_live_…" />
        </Field>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p class="hint">
        Or ask for a one-time link on the server: <code>chatsvc console-link --email you@example.com</code> (valid for 10 minutes).
      </p>
    </main>
  );
}
