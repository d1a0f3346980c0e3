/** A refusal from the server: its status, message and field errors (422). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: Record<string, string[]> = {},
  ) {
    super(message);
  }
}

export interface Answer<T> {
  data: T;
  meta?: Record<string, any>;
  links?: Record<string, string | null>;
  message?: string;
}

/** Called when the session is gone (401), so the app shows the sign-in page. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/**
 * Calls the console's server. Paths are relative to the console page (`api/...`), so it
 * works wherever the console is mounted; the session cookie goes along by itself.
 */
export async function call<T = any>(path: string, { method = "GET", json }: { method?: string; json?: unknown } = {}): Promise<Answer<T>> {
  const response = await fetch(`api/${path}`, {
    method,
    headers: json === undefined ? {} : { "content-type": "application/json" },
    body: json === undefined ? undefined : JSON.stringify(json),
    credentials: "same-origin",
  });
  const body = await response.json().catch(() => ({ message: `HTTP ${response.status}` }));
  if (!response.ok) {
    if (response.status === 401 && path !== "session") onSignedOut();
    throw new ApiError(response.status, body.message ?? `HTTP ${response.status}`, body.errors);
  }
  return body as Answer<T>;
}

/** `?a=1&b=2` from the set values of an object. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") search.set(k, String(v));
  const text = search.toString();
  return text ? `?${text}` : "";
}
