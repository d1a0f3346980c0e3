import { useState } from "preact/hooks";
import { call } from "../api.js";
import { Empty, Field, Loading, Notice, PageTitle, formatDate, useAction, useLoad } from "../ui.js";
import { WidgetPreview } from "./widget-preview.js";

export interface Appearance {
  primary_color: string;
  bubble_color: string;
  widget_theme: "light" | "dark";
  profile_image: string;
  chat_icon: string | null;
  bubble_message: string;
  show_bubble_message: boolean;
}

export interface Bot {
  id: number;
  slug: string;
  name: string;
  display_name: string;
  description: string;
  language: string;
  is_active: boolean;
  greeting_message: string;
  fallback_message: string;
  placeholder_text: string;
  appearance: Appearance;
  model: string | null;
  instructions: string;
  allowed_origins: string[];
  created_at: string;
  updated_at: string;
}

export function ChatbotsPage({ slug }: { slug?: string }) {
  return slug ? <ChatbotEditor slug={slug} /> : <ChatbotList />;
}

function ChatbotList() {
  const { data: bots, error, reload } = useLoad(async () => (await call<Bot[]>("chatbots")).data);
  const create = useAction();
  const toggle = useAction();
  const [slug, setSlug] = useState("");
  const [name, setName] = useState("");

  return (
    <>
      <PageTitle>Chatbots</PageTitle>
      <Notice error={error || toggle.error} />
      {!bots && !error && <Loading />}
      {bots && bots.length === 0 && <Empty>No chatbots yet: create the first below.</Empty>}
      {bots && bots.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Chatbots of your organisation</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">Status</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {bots.map((bot) => (
                <tr key={bot.id}>
                  <td>
                    <a href={`#/chatbots/${bot.slug}`}>{bot.name}</a>
                  </td>
                  <td>
                    <code>{bot.slug}</code>
                  </td>
                  <td>
                    <span class={`badge ${bot.is_active ? "good" : "muted"}`}>{bot.is_active ? "Active" : "Inactive"}</span>
                  </td>
                  <td>{formatDate(bot.updated_at)}</td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="secondary"
                      disabled={toggle.busy}
                      onClick={() => toggle.run(async () => (await call(`chatbots/${bot.slug}`, { method: "PUT", json: { is_active: !bot.is_active } }), reload()))}
                    >
                      {bot.is_active ? "Deactivate" : "Activate"} <span class="sr-only">{bot.name}</span>
                    </button>
                    <a class="button secondary" href={`#/knowledge/${bot.slug}`}>
                      Knowledge <span class="sr-only">of {bot.name}</span>
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section class="card" aria-labelledby="new-bot">
        <h2 id="new-bot">New chatbot</h2>
        <Notice error={create.error} />
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            create.run(async () => {
              await call("chatbots", { method: "POST", json: { slug: slug.trim(), name: name.trim() } });
              location.hash = `#/chatbots/${slug.trim()}`;
            });
          }}
        >
          <Field label="Name">
            <input value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} required maxLength={200} />
          </Field>
          <Field label="Slug" hint="Lowercase letters, digits and dashes; used in URLs and the widget.">
            <input value={slug} onInput={(e) => setSlug((e.target as HTMLInputElement).value)} required pattern="[a-z0-9]([a-z0-9\-]*[a-z0-9])?" maxLength={64} />
          </Field>
          <button type="submit" disabled={create.busy}>
            Create chatbot
          </button>
        </form>
      </section>
    </>
  );
}

type Draft = Omit<Bot, "id" | "created_at" | "updated_at" | "slug" | "allowed_origins"> & { allowed_origins: string };

const toDraft = (bot: Bot): Draft => ({ ...bot, allowed_origins: bot.allowed_origins.join("\n"), model: bot.model ?? "" });

function ChatbotEditor({ slug }: { slug: string }) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const { error } = useLoad(async () => {
    const bot = (await call<Bot[]>("chatbots")).data.find((b) => b.slug === slug);
    if (!bot) throw new Error(`No chatbot ${slug} in your organisation`);
    setDraft(toDraft(bot));
    return bot;
  }, [slug]);
  const save = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  if (error) return <Notice error={error} />;
  if (!draft) return <Loading />;

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => (setSaved(null), setDraft({ ...draft, [key]: value }));
  const setLook = <K extends keyof Appearance>(key: K, value: Appearance[K]) => set("appearance", { ...draft.appearance, [key]: value });
  const text = (key: keyof Draft, label: string, opts: { area?: boolean; hint?: string; max?: number } = {}) => (
    <Field label={label} hint={opts.hint}>
      {opts.area ? (
        <textarea rows={3} value={draft[key] as string} maxLength={opts.max} onInput={(e) => set(key, (e.target as HTMLTextAreaElement).value as never)} />
      ) : (
        <input value={draft[key] as string} maxLength={opts.max} onInput={(e) => set(key, (e.target as HTMLInputElement).value as never)} />
      )}
    </Field>
  );

  const submit = (e: Event) => {
    e.preventDefault();
    save.run(async () => {
      const { allowed_origins, model, ...rest } = draft;
      const body = {
        ...rest,
        display_name: rest.display_name || null,
        model: model?.trim() ? model.trim() : null,
        allowed_origins: allowed_origins.split(/\s+/).filter(Boolean),
      };
      const bot = (await call<Bot>(`chatbots/${slug}`, { method: "PUT", json: body })).data;
      setDraft(toDraft(bot));
      setSaved("Saved.");
    });
  };

  return (
    <>
      <PageTitle actions={<a href="#/chatbots">All chatbots</a>}>{draft.name}</PageTitle>
      <div class="editor">
        <form class="settings" onSubmit={submit}>
          <fieldset>
            <legend>Settings</legend>
            {text("name", "Name", { max: 200 })}
            {text("display_name", "Display name", { hint: "Shown to visitors; the name when empty.", max: 200 })}
            {text("description", "Description", { area: true, max: 2000 })}
            {text("language", "Language", { hint: "A language code such as en or pt-BR.", max: 35 })}
            {text("model", "Model", { hint: "extractive, ollama:<model> or openai:<model>; empty for the server default.", max: 200 })}
            {text("instructions", "Instructions", { area: true, max: 20000 })}
            <label class="check">
              <input type="checkbox" checked={draft.is_active} onChange={(e) => set("is_active", (e.target as HTMLInputElement).checked)} /> Active (visitors and the API can chat)
            </label>
          </fieldset>
          <fieldset>
            <legend>Messages</legend>
            {text("greeting_message", "Greeting", { area: true, max: 2000 })}
            {text("fallback_message", "Fallback when it cannot answer", { area: true, max: 2000 })}
            {text("placeholder_text", "Input placeholder", { max: 200 })}
          </fieldset>
          <fieldset>
            <legend>Appearance</legend>
            <div class="grid-2">
              <Field label="Primary colour">
                <input type="color" value={expand(draft.appearance.primary_color)} onInput={(e) => setLook("primary_color", (e.target as HTMLInputElement).value)} />
              </Field>
              <Field label="Bubble colour">
                <input type="color" value={expand(draft.appearance.bubble_color)} onInput={(e) => setLook("bubble_color", (e.target as HTMLInputElement).value)} />
              </Field>
            </div>
            <Field label="Theme">
              <select value={draft.appearance.widget_theme} onChange={(e) => setLook("widget_theme", (e.target as HTMLSelectElement).value as "light" | "dark")}>
                <option value="light">Light</option>
                <option value="dark">Dark</option>
              </select>
            </Field>
            <Field label="Bubble message">
              <input value={draft.appearance.bubble_message} maxLength={200} onInput={(e) => setLook("bubble_message", (e.target as HTMLInputElement).value)} />
            </Field>
            <label class="check">
              <input type="checkbox" checked={draft.appearance.show_bubble_message} onChange={(e) => setLook("show_bubble_message", (e.target as HTMLInputElement).checked)} /> Show the bubble message
            </label>
            <Field label="Profile image URL" hint="https or data:image URL.">
              <input value={draft.appearance.profile_image} onInput={(e) => setLook("profile_image", (e.target as HTMLInputElement).value)} />
            </Field>
          </fieldset>
          <fieldset>
            <legend>Allowed origins</legend>
            {text("allowed_origins", "Sites where the widget may run", { area: true, hint: "One origin per line, such as https://example.com." })}
          </fieldset>
          <Notice error={save.error} ok={saved} />
          <button type="submit" disabled={save.busy}>
            Save changes
          </button>
        </form>
        <aside class="preview" aria-label="Widget preview">
          <h2>Preview</h2>
          <WidgetPreview draft={draft} slug={slug} />
        </aside>
      </div>
    </>
  );
}

/** `<input type=color>` takes #rrggbb only. */
function expand(hex: string): string {
  return /^#[0-9a-f]{3}$/i.test(hex) ? `#${[...hex.slice(1)].map((c) => c + c).join("")}` : hex;
}
