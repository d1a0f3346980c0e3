import type { Command } from "commander";
import { withService } from "../context.js";
import { printJson } from "../output.js";

/** The console sign-in URL for a token: the token rides in the hash, which browsers never send to a server or proxy log. */
export function consoleLinkUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, "")}/console/#/sign-in/${token}`;
}

export function registerConsoleLink(program: Command): void {
  program
    .command("console-link")
    .description("Print a one-time sign-in link to the operator console (valid for 10 minutes)")
    .requiredOption("--email <email>", "the user who signs in")
    .option("--url <url>", "the server's base URL (default: publicUrl, else http://127.0.0.1:3000)")
    .option("--json", "print {url, expires_at, email} as JSON")
    .action(async (opts: { email: string; url?: string; json?: boolean }, cmd: Command) => {
      await withService(cmd, async (service) => {
        const link = await service.consoleSessions.createLink(opts.email);
        const url = consoleLinkUrl(opts.url ?? service.config.publicUrl ?? "http://127.0.0.1:3000", link.token);
        if (opts.json) printJson({ url, expires_at: link.expires_at, email: link.user.email });
        else process.stdout.write(`Sign in to the console as ${link.user.email} (works once, until ${link.expires_at}):\n\n  ${url}\n`);
      });
    });
}
