import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Command } from "commander";
import type { ExposedFile } from "../../core/storage/index.js";
import type { Logger } from "../../http/logger.js";
import type { SyncRound } from "../../knowledge/types.js";
import { databaseLabel, databaseOptions } from "../context.js";
import { parseCount } from "../output.js";
import { onParentExit, startedByNpm } from "../parent-exit.js";
import { initIfEmpty, printBootstrap } from "./init.js";

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Serve the API (sets up an empty database first)")
    .option("--port <port>", "TCP port", "3000")
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .option("--public-url <url>", "public URL of this server's root, e.g. https://chat.example.com (env CHATSVC_PUBLIC_URL)")
    .option("--allow-private-webhooks", "deliver webhooks to private and loopback addresses")
    .option("--sync-every <duration>", "re-fetch web documents of every chatbot this often, e.g. 24h (env CHATSVC_SYNC_EVERY); one instance at a time")
    .option("--shutdown-timeout <ms>", "on SIGTERM/SIGINT, longest wait for in-flight requests", "10000")
    .option("--no-search-thread", "search on the main thread instead of a worker thread of its own (env CHATSVC_SEARCH_THREAD=0)")
    .action(async (opts: { port: string; host: string; publicUrl?: string; allowPrivateWebhooks?: boolean; syncEvery?: string; shutdownTimeout: string; searchThread: boolean }, cmd: Command) => {
      const port = parseCount(opts.port, "--port");
      const shutdownTimeoutMs = parseCount(opts.shutdownTimeout, "--shutdown-timeout");
      const [{ createChatService }, { startServer }, { createLogger }] = await Promise.all([
        import("../../service.js"),
        import("../../http/server.js"),
        import("../../http/logger.js"),
      ]);
      const service = await createChatService({
        ...databaseOptions(cmd),
        ...(opts.publicUrl !== undefined && { publicUrl: opts.publicUrl }),
        ...(opts.allowPrivateWebhooks && { webhooks: { allowPrivateNetworks: true } }),
        ...(opts.syncEvery !== undefined && { syncEvery: opts.syncEvery }),
        // On unless turned off here or in the environment (the library's default is off: see `searchThread`).
        ...((!opts.searchThread || process.env.CHATSVC_SEARCH_THREAD === undefined) && { searchThread: opts.searchThread }),
      });
      try {
        // Setting up ingests the bundled docs (about a second): say so first rather than sit silent.
        if (await service.isEmpty()) process.stdout.write(`First run: setting up ${databaseLabel(service)} (organisation, API key, demo chatbot with chatsvc's docs)...\n`);
        const created = await initIfEmpty(service);
        if (created) printBootstrap(created);
        const logger = createLogger({ level: service.config.logLevel });
        service.knowledge.onSyncRound((round) => logger.log("info", "web sources synced", { chatbots: round.chatbots.map(syncSummary), aborted: round.aborted }));
        warnExposedFiles(service.exposedFiles(), logger);
        const server = await startServer(service, { port, host: opts.host, shutdownTimeoutMs });
        // Each chatbot's vectors are read now rather than by its first visitor's question (seconds on a large base).
        const preloadStarted = performance.now();
        service.knowledge.preload().then(
          // A load cut short by shutting down is not worth a line.
          ({ chatbots, vectors }) => stopping || logger.log("info", "vectors loaded", { chatbots, vectors, duration_ms: Math.round(performance.now() - preloadStarted) }),
          (error: unknown) => logger.log("warn", "vectors not loaded ahead; each chatbot's first search loads them", { error: error instanceof Error ? error.message : String(error) }),
        );
        // Daily retention passes; instances sharing a database take turns through a lease. `service.close()` stops it.
        service.retention.start({
          holder: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
          onError: (error) => logger.log("error", "retention pass failed", { error: error instanceof Error ? error.message : String(error) }),
          onPass: (results) => {
            for (const { organization_id, retention_days, cutoff, deleted } of results) {
              if (deleted.conversations > 0) logger.log("info", "retention pass", { organization_id, retention_days, cutoff, ...deleted });
            }
          },
        });
        let stopping = false;
        const stop = async (signal: string, { repeatForces = true } = {}) => {
          if (stopping) {
            if (!repeatForces) return;
            // A second signal means the operator will not wait: pending deliveries are in the outbox anyway.
            logger.log("warn", "forced exit", { signal });
            process.exit(1);
          }
          stopping = true;
          const started = performance.now();
          process.stdout.write(`\n${signal}: finishing in-flight requests...\n`);
          logger.log("info", "shutting down", { signal, shutdown_timeout_ms: shutdownTimeoutMs });
          // Stops accepting at once; in-flight requests get up to shutdownTimeoutMs, then their sockets are closed.
          await server.close();
          // Writes the batched last_used_at times and gives deliveries in flight up to 2 s; the rest stay in the outbox for the next start.
          await service.close();
          logger.log("info", "stopped", { signal, duration_ms: Math.round(performance.now() - started) });
          process.exit(0);
        };
        process.on("SIGINT", () => void stop("SIGINT"));
        process.on("SIGTERM", () => void stop("SIGTERM"));
        // Under npm the signal reaches only npm's shell, whose exit is then our cue. Elsewhere (nohup, a shell's `&`)
        // the server outlives its parent on purpose. Ctrl-C signals the whole group, so this may come after SIGINT.
        if (startedByNpm()) onParentExit(() => void stop("parent exited", { repeatForces: false }));
        // The handlers are in place before the address is printed: whoever waits for that line may signal at once,
        // and a SIGTERM before them would kill the process outright, without the graceful stop or its last log lines.
        process.stdout.write(
          `chatsvc listening on ${server.url} (database ${databaseLabel(service)})\n` +
            // With a public URL, the demo bot works on that origin only.
            `Chat with the demo bot: open ${service.config.publicUrl ?? server.url}/ in a browser\n` +
            `Try the API: curl ${server.url}/api/v1/auth/test -H "Authorization: Bearer <your key>"\n`,
        );
      } catch (error) {
        await service.close();
        throw error;
      }
    });
}

/** One chatbot of a sync round, for the JSON log: counts, and the URLs that failed (they need a look). */
function syncSummary({ slug, report }: SyncRound["chatbots"][number]) {
  return {
    chatbot: slug,
    checked: report.checked,
    added: report.added.length,
    unchanged: report.unchanged,
    updated: report.updated.length,
    removed: report.removed.length,
    failed: report.failed.map((f) => ({ url: f.url, error: f.error })),
  };
}

/**
 * Says, on stderr and in the JSON log, which database files others can read or write and how to fix it.
 * Only a warning: changing an operator's permissions unasked could break a setup that shares the file on purpose.
 */
function warnExposedFiles(files: ExposedFile[], logger: Logger): void {
  if (files.length === 0) return;
  const fix = `chmod 600 ${files.map((f) => f.path).join(" ")}`;
  process.stderr.write(
    `warning: database files readable or writable by group or others: ${files.map((f) => `${f.path} (${f.mode})`).join(", ")}. ` +
      `They hold webhook secrets, the widget signing secret, leads and transcripts. Fix: ${fix}\n`,
  );
  logger.log("warn", "database file permissions let group or others in", { files, fix });
}
