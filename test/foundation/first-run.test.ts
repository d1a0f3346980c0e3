import { afterEach, expect, it } from "vitest";
import { createChatService, internalsOf, type ChatService } from "../../src/service.js";
import { testDatabase, type TestDatabase } from "../support/database.js";
import { tempDir } from "../support/harness.js";

// A cluster's first deploy: several instances start together on one empty database.
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function instances(n: number): Promise<ChatService[]> {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const database: TestDatabase = await testDatabase(dir);
  cleanups.push(() => database.drop());
  const services: ChatService[] = [];
  // One after another: the first opening creates (SQLite) or migrates the database.
  for (let i = 0; i < n; i++) services.push(await createChatService({ ...database.options, renderWorker: false }));
  cleanups.push(() => Promise.all(services.map((s) => s.close())));
  return services;
}

it("instances starting together on an empty database set it up once; the others wait and set up nothing", async () => {
  const services = await instances(3);
  const results = await Promise.all(services.map((s) => s.bootstrapIfEmpty({ ingestDocs: false })));
  expect(results.filter((r) => r !== undefined)).toHaveLength(1);
  for (const s of services) {
    expect(await s.orgs.list()).toHaveLength(1);
    expect((await s.chatbots.list(results.find((r) => r)!.organization.id)).map((b) => b.slug)).toEqual(["demo"]);
  }
  expect(await services[0]!.bootstrapIfEmpty({ ingestDocs: false })).toBeUndefined();
});

it("takes over a first-run claim whose holder died before setting anything up", async () => {
  const [service] = await instances(1);
  const tenMinutesAgo = Date.now() - 10 * 60_000;
  await internalsOf(service!).storage.settings.put("first_run_setup", `${tenMinutesAgo} dead-instance`);
  const result = await service!.bootstrapIfEmpty({ ingestDocs: false });
  expect(result?.chatbot.slug).toBe("demo");
  expect(await service!.orgs.list()).toHaveLength(1);
});
