import type { Queryable } from "./client.js";
import { all, run, statement } from "./client.js";

/** Scopes of the `revisions` counters: what instances cache and must drop when another changes it. */
export type RevisionScope = "keys" | "chatbots" | "knowledge" | "settings" | `vectors:${number}`;

const bump = statement(
  "revisions_bump",
  `INSERT INTO revisions (scope, revision) VALUES ($1, 1)
   ON CONFLICT (scope) DO UPDATE SET revision = revisions.revision + 1`,
);
const read = statement("revisions_read", "SELECT scope, revision FROM revisions WHERE scope = ANY($1::text[])");

/** Counts a change; inside the changing transaction when given its client, so it is seen exactly when the change is. */
export async function bumpRevision(q: Queryable, scope: RevisionScope): Promise<void> {
  await run(q, bump, [scope]);
}

/** The current counters of `scopes` (0 for one never bumped). */
export async function readRevisions(q: Queryable, scopes: readonly RevisionScope[]): Promise<Map<string, number>> {
  const found = new Map<string, number>(scopes.map((s) => [s, 0]));
  for (const row of await all<{ scope: string; revision: string }>(q, read, [scopes])) found.set(row.scope, Number(row.revision));
  return found;
}
