import type { Appearance } from "./chatbots.js";

interface PreviewDraft {
  name: string;
  display_name: string;
  greeting_message: string;
  placeholder_text: string;
  appearance: Appearance;
}

/**
 * How the widget will look with the settings being edited: its panel and launcher drawn
 * from the form's values as they change, before anything is saved. It draws, it does not chat.
 */
export function WidgetPreview({ draft }: { draft: PreviewDraft }) {
  const look = draft.appearance;
  const dark = look.widget_theme === "dark";
  return (
    <div class={`wp ${dark ? "wp-dark" : ""}`} style={{ "--wp-primary": look.primary_color, "--wp-bubble": look.bubble_color }} data-testid="widget-preview">
      <div class="wp-panel">
        <div class="wp-head">
          <img src={look.profile_image} alt="" width={28} height={28} />
          <strong>{draft.display_name || draft.name}</strong>
        </div>
        <div class="wp-body">
          <p class="wp-msg">{draft.greeting_message}</p>
          <p class="wp-msg wp-user">What can you do?</p>
        </div>
        <div class="wp-input">
          <span>{draft.placeholder_text}</span>
          <span class="wp-send" aria-hidden="true">
            ➤
          </span>
        </div>
      </div>
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
