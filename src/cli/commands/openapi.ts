import type { Command } from "commander";

export function registerOpenApi(program: Command): void {
  program
    .command("openapi")
    .description("Print the API's OpenAPI 3.1 document (JSON); needs no database")
    .option("--server-url <url>", "the API root clients use, e.g. https://chat.example.com/api/v1", "/api/v1")
    .action(async (opts: { serverUrl: string }) => {
      // Loaded on use, so `chatsvc --help` does not pay for h3 and zod.
      const [{ apiRoutes }, { buildOpenApiDocument }] = await Promise.all([import("../../http/app.js"), import("../../http/openapi.js")]);
      process.stdout.write(`${JSON.stringify(buildOpenApiDocument(apiRoutes, { serverUrl: opts.serverUrl }), null, 2)}\n`);
    });
}
