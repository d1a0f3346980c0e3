/** A document read and turned into text, ready to chunk. */
export interface LoadedDocument {
  name: string;
  /** `file`, `url` or `text`; becomes a source's `type`. */
  type: "file" | "url" | "text";
  /** Identity within the chatbot: absolute path, URL or `text:<name>`; re-ingesting it updates the document. */
  source: string;
  url: string | null;
  /** How to chunk `text`: Markdown by headings (HTML and JSON arrive as Markdown) or plain. */
  format: "md" | "txt";
  text: string;
  /** Size of what was read, in bytes. */
  bytes: number;
  /** Set for a page fetched from its URL: what its server said about its version. */
  web?: PageValidators;
}

/** A page's `ETag` and `Last-Modified`, sent back in a conditional request; null when the server sent none. */
export interface PageValidators {
  etag: string | null;
  last_modified: string | null;
}

/** One thing to load, after folders are expanded. */
export type LoadTarget =
  | { kind: "file"; path: string }
  | { kind: "url"; url: string; /** The sitemap that listed it, for pages found through one. */ sitemap?: string }
  | { kind: "text"; name: string; content: string; format: "md" | "txt" | "html" | "json"; url: string | null };
