import type { H3Event } from "h3";
import type { ChatService } from "../../service.js";

/** The chatbot `serve`'s demo page shows; bootstrap creates it. */
export const DEMO_SLUG = "demo";

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

// The widget styles its Shadow DOM with a <style> element, hence 'unsafe-inline' for styles only.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self'",
  "img-src * data:",
  "style-src 'self' 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The page `serve` shows at `/`: a short welcome that embeds the widget for
 * the `demo` chatbot, so a new user sees a working chat right after
 * `npx chatsvc serve`, with the snippet and commands to put it on their own site.
 *
 * @example
 * app.get("/", (event) => demoPage(event, service));
 */
export async function demoPage(event: H3Event, service: ChatService, slug = DEMO_SLUG): Promise<string> {
  const bot = await service.chatbots.find(slug);
  const live = bot !== undefined && bot.is_active;
  // Shown to whoever asked, so the request's own origin is fine when no public URL is configured.
  const base = service.config.publicUrl ?? event.url.origin;
  const snippet = `<script src="${base}/widget.js" data-chatbot="${slug}" async></script>`;
  event.res.headers.set("content-type", "text/html; charset=utf-8");
  event.res.headers.set("content-security-policy", CSP);
  event.res.headers.set("x-content-type-options", "nosniff");
  event.res.headers.set("referrer-policy", "strict-origin-when-cross-origin");
  event.res.headers.set("cache-control", "no-store");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chatsvc is running</title>
<link rel="icon" href="data:,">
<style>
  :root { color-scheme: light dark; --fg: #0f172a; --muted: #475569; --bg: #f8fafc; --card: #fff; --line: #e2e8f0; --code: #0f172a; --code-fg: #e2e8f0; --accent: #2563eb; }
  @media (prefers-color-scheme: dark) { :root { --fg: #e2e8f0; --muted: #94a3b8; --bg: #0b1120; --card: #111827; --line: #1f2937; --code: #020617; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  main { max-width: 720px; margin: 0 auto; padding: 56px 24px 120px; }
  /* Leave the chat panel (bottom right) its room on wide screens. */
  @media (min-width: 1100px) { main { margin: 0 max(440px, calc(50vw - 360px)) 0 max(48px, calc(50vw - 560px)); } }
  .badge { display: inline-flex; align-items: center; gap: 8px; font-size: 13px; font-weight: 600; color: #15803d; background: #dcfce7; border-radius: 999px; padding: 4px 12px; }
  .badge::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: #16a34a; }
  h1 { font-size: 40px; line-height: 1.15; margin: 16px 0 12px; letter-spacing: -0.02em; }
  h2 { font-size: 20px; margin: 0 0 8px; }
  p { margin: 0 0 12px; color: var(--muted); }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: 14px; padding: 24px; margin-top: 24px; }
  pre { margin: 8px 0 0; padding: 14px 16px; border-radius: 10px; background: var(--code); color: var(--code-fg); overflow-x: auto; font: 13px/1.5 ui-monospace, SFMono-Regular, Menlo, monospace; }
  code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.9em; }
  ol { margin: 0; padding-left: 20px; color: var(--muted); }
  li + li { margin-top: 14px; }
  .hint { font-size: 14px; margin: 14px 0 0; }
  a { color: var(--accent); }
</style>
</head>
<body>
<main>
  <span class="badge">chatsvc is running</span>
  <h1>Your chatbot service is up.</h1>
  ${
    live
      ? `<p>This page embeds the chat widget of the <code>${escapeHtml(slug)}</code> chatbot, which has read chatsvc's own documentation. Open the chat in the corner and ask, for example, <em>“How do I create an API key?”</em></p>`
      : `<p>There is no active <code>${escapeHtml(slug)}</code> chatbot in this database, so this page shows no chat. Create one with <code>chatsvc bots create</code> and embed it as below.</p>`
  }
  <section class="card">
    <h2>Put the chat on your website</h2>
    <ol>
      <li>Allow your site's origin (an empty list keeps the widget off):
        <pre>npx chatsvc bots update ${escapeHtml(slug)} --allowed-origins https://www.example.com</pre></li>
      <li>Paste this before <code>&lt;/body&gt;</code>:
        <pre>${escapeHtml(snippet)}</pre></li>
    </ol>
    <p class="hint">The widget needs no API key: keys stay on your server.</p>
  </section>
  <section class="card">
    <h2>Or build your own interface on the API</h2>
    <pre>curl ${escapeHtml(base)}/api/v1/chatbots -H "Authorization: Bearer &lt;your key&gt;"</pre>
  </section>
</main>
${live ? `<script src="/widget.js" data-chatbot="${escapeHtml(slug)}" async></script>` : ""}
</body>
</html>
`;
}
