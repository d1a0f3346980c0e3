/**
 * `%text%` for SQL `LIKE ... ESCAPE '\'` (and PostgreSQL `ILIKE`): the text found anywhere,
 * its own `\`, `%` and `_` matched literally rather than as wildcards. Null for no text.
 *
 * @example
 * likePattern("50% off"); // "%50\\% off%"
 */
export function likePattern(text: string | null | undefined): string | null {
  return text ? `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
}
