import type { Command } from "commander";
import { parseCount } from "../output.js";
import { initIfEmpty, printBootstrap } from "./init.js";

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Serve the API (sets up an empty database first)")
    .option("--port <port>", "TCP port", "3000")
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .option("--allow-private-webhooks", "deliver webhooks to private and loopback addresses")
    .action(async (opts: { port: string; host: string; allowPrivateWebhooks?: boolean }, cmd: Command) => {
      const port = parseCount(opts.port, "--port");
      const { db } = cmd.optsWithGlobals<{ db?: string }>();
      const [{ createChatService }, { startServer }] = await Promise.all([import("../../service.js"), import("../../http/server.js")]);
      const service = createChatService({
        ...(db && { db }),
        ...(opts.allowPrivateWebhooks && { webhooks: { allowPrivateNetworks: true } }),
      });
      try {
        const created = await initIfEmpty(service);
        if (created) printBootstrap(created);
        const server = await startServer(service, { port, host: opts.host });
        process.stdout.write(
          `chatsvc listening on ${server.url} (database ${service.config.db})\n` +
            `Try: curl ${server.url}/api/v1/auth/test -H "Authorization: Bearer <your key>"\n`,
        );
        let stopping = false;
        const stop = async (signal: string) => {
          if (stopping) return;
          stopping = true;
          process.stdout.write(`\n${signal}: finishing in-flight requests...\n`);
          await server.close();
          await service.close();
          process.exit(0);
        };
        process.once("SIGINT", () => void stop("SIGINT"));
        process.once("SIGTERM", () => void stop("SIGTERM"));
      } catch (error) {
        await service.close();
        throw error;
      }
    });
}
