import { request, type ApiResponse, type Harness } from "../support/harness.js";

export interface WidgetCall extends RequestInit {
  /** `Origin` header; null sends none. Default: the server's own origin. */
  origin?: string | null;
  /** Visitor token, sent as `X-Widget-Token`. */
  token?: string;
  json?: unknown;
}

/** Calls the widget surface (outside `/api/v1`) over the real socket, as a browser page on `origin` would. */
export function widgetCall(h: Harness, path: string, { origin, token, headers, ...init }: WidgetCall = {}): Promise<ApiResponse> {
  const hdrs = new Headers(headers);
  const from = origin === undefined ? h.server.url : origin;
  if (from !== null) hdrs.set("origin", from);
  if (token !== undefined) hdrs.set("x-widget-token", token);
  return request(`${h.server.url}${path}`, { ...init, headers: hdrs, key: null });
}

/** Opens a widget conversation with the `demo` bot from the server's own origin; returns its id and token. */
export async function openWidgetConversation(h: Harness, slug = "demo", origin?: string): Promise<{ id: number; token: string }> {
  const res = await widgetCall(h, `/widget/${slug}/conversations`, { json: {}, ...(origin !== undefined && { origin }) });
  if (res.status !== 201) throw new Error(`could not open a widget conversation: ${res.status} ${res.text}`);
  return { id: res.body.data.conversation_id, token: res.body.data.token };
}
