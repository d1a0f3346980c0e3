import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api.js";

/** A form error or notice, announced to screen readers. */
export function Notice({ error, ok }: { error?: unknown; ok?: string | null }) {
  if (error) {
    const message = error instanceof ApiError ? error.message : String((error as Error)?.message ?? error);
    const fields = error instanceof ApiError ? Object.entries(error.errors ?? {}) : [];
    return (
      <div class="notice error" role="alert">
        {message}
        {fields.length > 1 && (
          <ul>
            {fields.map(([field, messages]) => (
              <li key={field}>{messages.join(" ")}</li>
            ))}
          </ul>
        )}
      </div>
    );
  }
  return ok ? (
    <div class="notice ok" role="status">
      {ok}
    </div>
  ) : null;
}

/** Loads data on mount and when `deps` change; `reload` fetches again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (d) => live && setData(d),
      (e) => live && setError(e),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

/** Runs an action with a busy flag and its error, for buttons and forms. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, setError };
}

/** A page's heading, focused when the page opens so keyboard and screen-reader users land on it. */
export function PageTitle({ children, actions }: { children: ComponentChildren; actions?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div class="page-title">
      <h1 tabIndex={-1} ref={ref}>
        {children}
      </h1>
      {actions && <div class="actions">{actions}</div>}
    </div>
  );
}

export function Field({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span class="label">{label}</span>
      {children}
      {hint && <span class="hint">{hint}</span>}
    </label>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function Loading() {
  return (
    <p class="loading" role="status">
      Loading…
    </p>
  );
}

export const formatDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : "—");

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A chatbot picker shared by the pages that work on one chatbot or filter by one. */
export function BotSelect({ bots, value, onChange, label = "Chatbot", any }: { bots: { slug: string; name: string }[]; value: string; onChange: (slug: string) => void; label?: string; any?: string }) {
  return (
    <Field label={label}>
      <select value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {any !== undefined && <option value="">{any}</option>}
        {bots.map((b) => (
          <option key={b.slug} value={b.slug}>
            {b.name} ({b.slug})
          </option>
        ))}
      </select>
    </Field>
  );
}
