import type { Command } from "commander";
import { databaseLabel, withService } from "../context.js";
import { printJson } from "../output.js";

export function registerMigrate(program: Command): void {
  program
    .command("migrate")
    .description("Apply pending database migrations and exit (serve and every other command apply them on start too)")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }, command: Command) => {
      // Opening the database migrates it: on PostgreSQL under an advisory lock, so
      // running this while instances start (or twice at once) applies each migration once.
      const { internalsOf } = await import("../../service.js");
      const { engine, label } = await withService(command, (service) => ({ engine: internalsOf(service).storage.engine, label: databaseLabel(service) }));
      if (opts.json) printJson({ migrated: true, engine, database: label });
      else process.stdout.write(`Database ${label} (${engine}) is up to date.\n`);
    });
}
