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
}

/** One thing to load, after folders are expanded. */
export type LoadTarget =
  | { kind: "file"; path: string }
  | { kind: "url"; url: string }
  | { kind: "text"; name: string; content: string; format: "md" | "txt" | "html" | "json"; url: string | null };
