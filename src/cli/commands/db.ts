import type { Command } from "commander";
import { DEFAULT_DB_FILE } from "../../core/config.js";
import { withoutPassword } from "../context.js";
import { printJson, printTable } from "../output.js";

export function registerDb(program: Command): void {
  const db = program.command("db").description("Move data between databases");

  db.command("copy")
    .description("Copy the SQLite database (--db) whole into a new, empty PostgreSQL database, keeping ids")
    .requiredOption("--to <url>", "the PostgreSQL database, postgres://user:password@host/name (migrated first; must hold no rows)")
    .option("--json", "print JSON")
    .action(async (opts: { to: string; json?: boolean }, command: Command) => {
      const from = command.optsWithGlobals<{ db?: string }>().db ?? DEFAULT_DB_FILE;
      const { isPostgresUrl } = await import("../../storage/postgres/open.js");
      if (!isPostgresUrl(opts.to)) throw new Error("--to must be a postgres:// or postgresql:// URL");
      // Loaded on use: the copy pulls in both engines.
      const { copySqliteToPostgres } = await import("../../storage/copy.js");
      const { tables, total } = await copySqliteToPostgres(from, opts.to);
      const to = withoutPassword(opts.to);
      if (opts.json) {
        printJson({ from, to, tables: Object.fromEntries(tables.map((t) => [t.table, t.rows])), total });
        return;
      }
      process.stdout.write(`Copied ${from} to ${to}: ${total} rows, counts verified.\n`);
      printTable(tables.map((t) => ({ ...t })), ["table", "rows"]);
    });
}
