import { existsSync, readdirSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { H3 } from "h3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiRoutes, buildOpenApiDocument, createApiApp, type OpenApiDocument } from "../../src/h3.js";
import { runCli } from "../support/cli.js";
import { startHarness, tempDir, type Harness } from "../support/harness.js";

const METHODS = ["get", "post", "put", "delete", "patch", "head", "options"];
const operationsOf = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op: op as Record<string, any> })),
  );

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe("the OpenAPI document", () => {
  const document = buildOpenApiDocument(apiRoutes);

  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator();
    const result = await validator.validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("describes every registered route, and nothing else", () => {
    const registered = apiRoutes.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`).sort();
    expect(operationsOf(document).map((o) => o.key).sort()).toEqual(registered);
    const ids = operationsOf(document).map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("needs a key everywhere except on the document itself", () => {
    expect(document.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    for (const { key, op } of operationsOf(document)) {
      if (key === "GET /openapi.json") expect(op.security).toEqual([]);
      else {
        expect(op.security, key).toBeUndefined();
        expect(op.responses["401"], key).toBeDefined();
      }
    }
  });

  it("documents the envelope, the error envelope and 422 field errors", () => {
    const send = document.paths["/chatbots/{slug}/conversations/{id}/messages"]!.post as any;
    const ok = send.responses["200"].content["application/json"].schema;
    expect(ok.properties.success).toEqual({ type: "boolean", const: true });
    // The bot's reply, or no reply while a person handles the conversation.
    expect(ok.properties.data).toEqual({ anyOf: [{ $ref: "#/components/schemas/Reply" }, { $ref: "#/components/schemas/HumanHandledReply" }] });
    expect(ok.properties.meta).toEqual({ $ref: "#/components/schemas/CreditMeta" });
    // One answer type per operation, so a generated client types the reply without a cast; the stream has its own.
    expect(Object.keys(send.responses["200"].content)).toEqual(["application/json"]);
    const stream = document.paths["/chatbots/{slug}/conversations/{id}/messages/stream"]!.post as any;
    expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(stream.requestBody).toEqual(send.requestBody);
    expect(send.responses["429"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    expect(send.responses["422"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ValidationError" });
    expect(document.components.schemas.ValidationError!.required).toContain("errors");
    expect(send.requestBody.content["application/json"].schema.properties.message).toEqual({ type: "string", minLength: 1, maxLength: 10_000 });
  });

  it("documents the exports as streamed files with their media types and Content-Disposition", () => {
    const conversations = (document.paths["/conversations/export"]!.get as any).responses["200"];
    expect(Object.keys(conversations.content)).toEqual(["application/x-ndjson", "text/csv"]);
    expect(conversations.headers["Content-Disposition"].required).toBe(true);
    const leads = (document.paths["/leads/export"]!.get as any).responses["200"];
    expect(Object.keys(leads.content)).toEqual(["text/csv", "application/x-ndjson"]);
    const parameters = (document.paths["/conversations/export"]!.get as any).parameters.map((p: { name: string }) => p.name);
    expect(parameters).toEqual(["format", "chatbot", "since", "until"]);
    const erase = (document.paths["/visitors"]!.delete as any);
    expect(erase.parameters.map((p: { name: string }) => p.name)).toEqual(["visitor_id", "email"]);
    expect(erase.responses["200"].content["application/json"].schema.properties.data).toEqual({ $ref: "#/components/schemas/DeletedCounts" });
  });

  it("points every reference at a schema or header it defines", () => {
    const refs = JSON.stringify(document).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of new Set(refs)) {
      const [, kind, name] = /#\/components\/(schemas|headers)\/([\w-]+)/.exec(ref) ?? [];
      expect(kind && (document.components as any)[kind][name!], ref).toBeTruthy();
    }
  });

  it("describes X-Request-Id and the rate-limit headers on every answer, Retry-After on 429s and 409s, and 415 wherever a body is taken", () => {
    expect(Object.keys(document.components.headers).sort()).toEqual(["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id"]);
    for (const { key, op } of operationsOf(document)) {
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        expect(response.headers["X-Request-Id"], `${key} ${status}`).toEqual({ $ref: "#/components/headers/X-Request-Id" });
        expect(response.headers["X-RateLimit-Remaining"], `${key} ${status}`).toBeDefined();
        expect(response.headers["Retry-After"] !== undefined, `${key} ${status}`).toBe(status === "429" || status === "409");
      }
      expect(op.responses["415"] !== undefined, key).toBe(op.requestBody !== undefined);
    }
  });

  it("names ids as the spec does: `lead_id` in the lead submission answer, `id` on records", () => {
    const dataOf = (path: string, method: string, status: string) => {
      const schema = (document.paths[path] as any)[method].responses[status].content["application/json"].schema.properties.data;
      return schema.$ref ? document.components.schemas[schema.$ref.split("/").pop()]! : schema;
    };
    const submitted = dataOf("/chatbots/{slug}/conversations/{id}/leads", "post", "201") as any;
    expect(submitted.required).toEqual(expect.arrayContaining(["lead_id", "conversation_id"]));
    expect(submitted.properties.id).toBeUndefined();
    expect((dataOf("/leads/{id}", "get", "200") as any).required).toContain("id");
    expect((dataOf("/chatbots/{slug}/conversations/{id}", "get", "200") as any).required).toContain("id");
  });

  it("is served at /api/v1/openapi.json without a key", async () => {
    const res = await h.call("/openapi.json", { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it("names the path the API is mounted at as its server", async () => {
    const app = new H3().mount("/support/chat", createApiApp(h.service));
    const res = await app.request("/support/chat/openapi.json");
    expect(((await res.json()) as OpenApiDocument).servers).toEqual([{ url: "/support/chat" }]);
  });

  it("is printed by `chatsvc openapi`, which needs no database", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const result = await runCli(["openapi", "--server-url", "https://chat.example.com/api/v1"], { cwd: dir });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(apiRoutes, { serverUrl: "https://chat.example.com/api/v1" }))));
      expect(readdirSync(dir)).toEqual([]);
      expect(existsSync(`${dir}/.chatsvc`)).toBe(false);
    } finally {
      cleanup();
    }
  });
});
