import { useEffect, useRef, useState } from "preact/hooks";
import { call } from "../api.js";
import { Notice } from "../ui.js";
import type { Appearance } from "./chatbots.js";

interface PreviewDraft {
  name: string;
  display_name: string;
  greeting_message: string;
  placeholder_text: string;
  appearance: Appearance;
}

interface Line {
  id: number;
  role: "user" | "assistant" | "agent";
  content: string;
}

/** While a conversation is open, how often the preview looks for replies a person typed in the console. */
const POLL_MS = 2_000;

/**
 * The widget as it will look with the settings being edited (panel and launcher drawn from the
 * form's values as they change, before anything is saved), and live: a question asked here opens
 * a real conversation with the saved chatbot through the API (as the operator, so it shows in
 * Conversations), and replies typed by an agent who took it over appear here as a visitor sees them.
 */
export function WidgetPreview({ draft, slug }: { draft: PreviewDraft; slug?: string }) {
  const look = draft.appearance;
  const dark = look.widget_theme === "dark";
  const [conversation, setConversation] = useState<number | null>(null);
  const [lines, setLines] = useState<Line[]>([]);
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const body = useRef<HTMLDivElement>(null);

  // Another chatbot opened in the same editor starts a new conversation.
  useEffect(() => (setConversation(null), setLines([])), [slug]);
  useEffect(() => {
    if (conversation === null) return;
    let live = true;
    const refresh = async () => {
      const detail = (await call<{ messages: Line[] }>(`v1/conversations/${conversation}`)).data;
      if (live) setLines(detail.messages.map(({ id, role, content }) => ({ id, role, content })));
    };
    const timer = setInterval(() => refresh().catch(() => {}), POLL_MS);
    return () => ((live = false), clearInterval(timer));
  }, [conversation]);
  useEffect(() => body.current?.scrollTo(0, body.current.scrollHeight), [lines.length]);

  const ask = async (e: Event) => {
    e.preventDefault();
    const message = text.trim();
    if (!slug || !message) return;
    setBusy(true);
    setError(null);
    try {
      let id = conversation;
      if (id === null) {
        id = (await call<{ conversation_id: number }>(`v1/chatbots/${encodeURIComponent(slug)}/conversations`, { method: "POST", json: { visitor_name: "Console preview" } })).data.conversation_id;
        setConversation(id);
      }
      setText("");
      setLines((old) => [...old, { id: -Date.now(), role: "user", content: message }]);
      await call(`v1/chatbots/${encodeURIComponent(slug)}/conversations/${id}/messages`, { method: "POST", json: { message } });
      const detail = (await call<{ messages: Line[] }>(`v1/conversations/${id}`)).data;
      setLines(detail.messages.map(({ id: mid, role, content }) => ({ id: mid, role, content })));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class={`wp ${dark ? "wp-dark" : ""}`} style={{ "--wp-primary": look.primary_color, "--wp-bubble": look.bubble_color }} data-testid="widget-preview">
      <div class="wp-panel">
        <div class="wp-head">
          <img src={look.profile_image} alt="" width={28} height={28} />
          <strong>{draft.display_name || draft.name}</strong>
        </div>
        <div class="wp-body" ref={body} aria-live="polite">
          <p class="wp-msg">{draft.greeting_message}</p>
          {lines.length === 0 && <p class="wp-msg wp-user">What can you do?</p>}
          {lines.map((line) =>
            line.role === "user" ? (
              <p key={line.id} class="wp-msg wp-user">
                {line.content}
              </p>
            ) : (
              // Replies are the server's sanitised HTML, as the widget shows them.
              <div key={line.id} class={`wp-msg wp-reply ${line.role === "agent" ? "wp-agent" : ""}`} dangerouslySetInnerHTML={{ __html: line.content }} />
            ),
          )}
        </div>
        {slug ? (
          <form class="wp-input" onSubmit={ask}>
            <label class="sr-only" for="wp-text">
              Ask the preview
            </label>
            <input id="wp-text" value={text} placeholder={draft.placeholder_text} maxLength={4000} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
            <button type="submit" class="wp-send" disabled={busy || !text.trim()}>
              <span aria-hidden="true">➤</span>
              <span class="sr-only">Send</span>
            </button>
          </form>
        ) : (
          <div class="wp-input">
            <span>{draft.placeholder_text}</span>
          </div>
        )}
      </div>
      <Notice error={error} />
      <div class="wp-launch">
        {look.show_bubble_message && look.bubble_message && <span class="wp-bubble-msg">{look.bubble_message}</span>}
        <span class="wp-launcher" aria-hidden="true">
          <svg viewBox="0 0 24 24" width="26" height="26">
            <path d="M4 5h16v11H8l-4 4z" fill="none" stroke="#fff" stroke-width="2" stroke-linejoin="round" />
          </svg>
        </span>
      </div>
    </div>
  );
}
