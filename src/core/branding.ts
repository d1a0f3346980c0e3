import type { BrandingOptions } from "./config.js";

/** The `branding` object of a chatbot's configuration. */
export interface Branding {
  required: boolean;
  text: string;
  url: string;
  icon_url: string;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/**
 * The attribution element appended to replies while branding is required.
 * Built server-side from configuration, after sanitising, so model output can
 * neither forge nor break it.
 */
export function brandingElement({ text, url, iconUrl }: Required<BrandingOptions>): string {
  return (
    `<div class="svc-branding"><a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">` +
    `<img src="${escapeHtml(iconUrl)}" alt="" width="16" height="16"> ${escapeHtml(text)}</a></div>`
  );
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/**
 * Plain text of reply HTML, for copying: tags stripped, the branding element
 * dropped, block boundaries kept as line breaks, entities decoded.
 *
 * @example
 * toPlainText('<p>Hello <b>there</b></p><div class="svc-branding">…</div>') // "Hello there"
 */
export function toPlainText(html: string): string {
  return html
    .replace(/<div class="svc-branding">[\s\S]*?<\/div>/g, "")
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, "")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|li|h[1-6]|pre|blockquote|tr)>/gi, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === "#") {
        const code = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
