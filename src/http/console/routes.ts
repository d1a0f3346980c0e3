import { z } from "zod";
import { ATTRIBUTION_NOTICE, type ApiKey } from "../../core/keys.js";
import { ChatsvcError } from "../../core/errors.js";
import type { Principal } from "../../core/keys.js";
import type { ChatService } from "../../service.js";
import { clientIp } from "../client-ip.js";
import { ok } from "../envelope.js";
import { idParam, pathId, slugParam, type RouteDefinition } from "../router.js";
import { answerSignIn, sessionCookie, setSessionCookie } from "./session.js";

/*
 * What the console needs beyond the API (which it also serves, under /api/v1, with the
 * session's principal): sign-in, every chatbot with all its settings, the knowledge base and
 * API keys. Each calls the same service methods the CLI does, scoped to the caller's organisation.
 */

const any = z.unknown();
const tags = ["Console"];

/** The key, when it belongs to a user of the caller's organisation: 404 when it does not exist, 403 when another's. */
async function ownKey(service: ChatService, principal: Principal, rawId: string | undefined): Promise<ApiKey> {
  const id = pathId(rawId, "API key not found");
  const key = await service.keys.get(id);
  const users = await service.users.list(principal.organizationId);
  if (!users.some((u) => u.id === key.user_id)) throw ChatsvcError.forbidden();
  return key;
}

const FORMATS: Record<string, "md" | "txt" | "html" | "json"> = { md: "md", markdown: "md", txt: "txt", html: "html", htm: "html", json: "json" };
const uploadSchema = z.object({
  files: z
    .array(z.object({ name: z.string().min(1).max(255), content: z.string().max(1_000_000) }))
    .max(50)
    .optional(),
  url: z.url({ protocol: /^https?$/, error: "The url field must be an http(s) URL." }).optional(),
});

function parseUpload(body: unknown) {
  const parsed = uploadSchema.safeParse(body ?? {});
  if (!parsed.success) throw ChatsvcError.validation({ files: [parsed.error.issues[0]?.message ?? "Invalid upload."] });
  const { files = [], url } = parsed.data;
  if (files.length === 0 && !url) throw ChatsvcError.validation({ files: ["Give files or a url."] });
  return [
    ...files.map((file) => {
      const format = FORMATS[file.name.split(".").pop()!.toLowerCase()];
      if (!file.name.includes(".") || !format) throw ChatsvcError.validation({ files: [`${file.name}: only .md, .txt, .html and .json files can be uploaded here.`] });
      return { name: file.name, content: file.content, format };
    }),
    ...(url ? [url] : []),
  ];
}

export const consoleRoutes: RouteDefinition[] = [
  {
    method: "POST",
    path: "/api/session",
    operationId: "consoleSignIn",
    tags,
    auth: false,
    summary: "Sign in with a one-time link's token or an API key",
    response: { data: any },
    handler: async ({ event, service, body }) => {
      const input = ((await body()) ?? {}) as { token?: unknown; api_key?: unknown };
      if (typeof input.token === "string") return ok(answerSignIn(event, service, await service.consoleSessions.signInWithLink(input.token)));
      if (typeof input.api_key === "string") return ok(answerSignIn(event, service, await service.consoleSessions.signInWithKey(input.api_key)));
      throw ChatsvcError.validation({ token: ["Give the sign-in link's token or an API key."] });
    },
  },
  {
    method: "GET",
    path: "/api/session",
    operationId: "consoleWhoAmI",
    tags,
    summary: "Who is signed in",
    response: { data: any },
    handler: async ({ event, service, principal }) => {
      // Each visit renews the cookie's lifetime, as the server renews the session's.
      setSessionCookie(event, service, sessionCookie(event)!);
      const org = (await service.orgs.list()).find((o) => o.id === principal.organizationId);
      return ok({ user_id: principal.userId, organization_id: principal.organizationId, organization_name: org?.name ?? null, email: principal.email });
    },
  },
  {
    method: "DELETE",
    path: "/api/session",
    operationId: "consoleSignOut",
    tags,
    auth: false,
    summary: "Sign out",
    response: { data: any },
    handler: async ({ event, service }) => {
      await service.consoleSessions.signOut(sessionCookie(event));
      setSessionCookie(event, service, null);
      return ok(null, { message: "Signed out" });
    },
  },
  {
    method: "GET",
    path: "/api/chatbots",
    operationId: "consoleListChatbots",
    tags,
    summary: "Every chatbot of the organisation with all settings, inactive ones too",
    response: { data: any },
    handler: async ({ service, principal }) => ok(await service.chatbots.list(principal.organizationId)),
  },
  {
    method: "POST",
    path: "/api/chatbots",
    operationId: "consoleCreateChatbot",
    tags,
    summary: "Create a chatbot",
    response: { status: 201, data: any },
    handler: async ({ event, service, principal, body }) => {
      const input = ((await body()) ?? {}) as Record<string, unknown>;
      const bot = await service.chatbots.create({ ...input, organization_id: principal.organizationId } as never);
      event.res.status = 201;
      return ok(bot);
    },
  },
  {
    method: "PUT",
    path: "/api/chatbots/:slug",
    operationId: "consoleUpdateChatbot",
    tags,
    summary: "Change a chatbot's settings",
    params: { slug: slugParam },
    response: { data: any },
    handler: async ({ service, principal, params, body }) => {
      const bot = await service.chatbots.resolve(principal.organizationId, params.slug!);
      return ok(await service.chatbots.update(bot.slug, ((await body()) ?? {}) as never));
    },
  },
  {
    method: "GET",
    path: "/api/chatbots/:slug/documents",
    operationId: "consoleListDocuments",
    tags,
    summary: "The chatbot's knowledge documents",
    params: { slug: slugParam },
    response: { data: any },
    handler: async ({ service, principal, params }) => {
      const bot = await service.chatbots.resolve(principal.organizationId, params.slug!);
      return ok(await service.knowledge.list(bot.slug));
    },
  },
  {
    method: "POST",
    path: "/api/chatbots/:slug/documents",
    operationId: "consoleIngest",
    tags,
    summary: "Add files (`files: [{name, content}]`, text formats) or a URL (`url`) to the knowledge base",
    params: { slug: slugParam },
    response: { data: any },
    handler: async ({ service, principal, params, body }) => {
      const bot = await service.chatbots.resolve(principal.organizationId, params.slug!);
      return ok(await service.knowledge.ingest(bot.slug, parseUpload(await body())));
    },
  },
  {
    method: "DELETE",
    path: "/api/chatbots/:slug/documents/:id",
    operationId: "consoleRemoveDocument",
    tags,
    summary: "Remove a document with its chunks",
    params: { slug: slugParam, id: idParam("Document") },
    response: { data: any },
    handler: async ({ service, principal, params }) => {
      const bot = await service.chatbots.resolve(principal.organizationId, params.slug!);
      await service.knowledge.remove(bot.slug, pathId(params.id, "Document not found"));
      return ok(null, { message: "Document removed" });
    },
  },
  {
    method: "POST",
    path: "/api/chatbots/:slug/reindex",
    operationId: "consoleReindex",
    tags,
    summary: "Re-embed the chatbot's knowledge with the configured embedder",
    params: { slug: slugParam },
    response: { data: any },
    handler: async ({ service, principal, params }) => {
      const bot = await service.chatbots.resolve(principal.organizationId, params.slug!);
      return ok(await service.knowledge.reindex(bot.slug));
    },
  },
  {
    method: "POST",
    path: "/api/chatbots/:slug/sync",
    operationId: "consoleSync",
    tags,
    summary: "Re-fetch the chatbot's web documents and sitemaps (what `chatsvc kb sync` does)",
    params: { slug: slugParam },
    response: { data: any },
    handler: async ({ service, principal, params }) => {
      const bot = await service.chatbots.resolve(principal.organizationId, params.slug!);
      return ok(await service.knowledge.sync(bot.slug));
    },
  },
  {
    method: "GET",
    path: "/api/keys",
    operationId: "consoleListKeys",
    tags,
    summary: "The organisation's API keys (prefixes only)",
    response: { data: any },
    handler: async ({ service, principal }) => {
      const users = await service.users.list(principal.organizationId);
      const keys = (await Promise.all(users.map((u) => service.keys.list({ user_id: u.id })))).flat();
      return ok(keys.sort((a, b) => a.id - b.id), { meta: { attribution_notice: ATTRIBUTION_NOTICE } });
    },
  },
  {
    method: "POST",
    path: "/api/keys",
    operationId: "consoleCreateKey",
    tags,
    summary: "Create an API key for the signed-in user, shown once",
    response: { status: 201, data: any },
    handler: async ({ event, service, principal, body }) => {
      const input = ((await body()) ?? {}) as { name?: unknown; expires_at?: unknown; accept_attribution?: unknown };
      const key = await service.keys.create({
        user_id: principal.userId,
        name: input.name as string,
        expires_at: (input.expires_at as string | null | undefined) ?? null,
        accept_attribution: input.accept_attribution as true,
        ip: clientIp(event, service.config) ?? null,
      });
      event.res.status = 201;
      return ok(key);
    },
  },
  ...(["rename", "disable", "enable", "regenerate"] as const).map(
    (action): RouteDefinition => ({
      method: "POST",
      path: `/api/keys/:id/${action}`,
      operationId: `console${action[0]!.toUpperCase()}${action.slice(1)}Key`,
      tags,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} an API key`,
      params: { id: idParam("API key") },
      response: { data: any },
      handler: async ({ service, principal, params, body }) => {
        const key = await ownKey(service, principal, params.id);
        if (action === "rename") return ok(await service.keys.rename(key.id, (((await body()) ?? {}) as { name?: string }).name as string));
        return ok(await service.keys[action](key.id));
      },
    }),
  ),
  {
    method: "DELETE",
    path: "/api/keys/:id",
    operationId: "consoleDeleteKey",
    tags,
    summary: "Delete an API key",
    params: { id: idParam("API key") },
    response: { data: any },
    handler: async ({ service, principal, params }) => {
      const key = await ownKey(service, principal, params.id);
      await service.keys.delete(key.id);
      return ok({ id: key.id }, { message: "API key deleted" });
    },
  },
];
