import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Chatbot, Chatbots } from "./core/chatbots.js";
import type { IssuedApiKey, Keys } from "./core/keys.js";
import { packageRoot } from "./core/package-root.js";
import type { Organization, Orgs } from "./core/orgs.js";
import type { SettingStore } from "./core/storage/index.js";
import type { User, Users } from "./core/users.js";
import type { Knowledge } from "./knowledge/types.js";

export interface BootstrapOptions {
  organizationName?: string;
  email?: string;
  /** Recorded as the address the attribution obligation was accepted from. */
  ip?: string | null;
  /** Ingest chatsvc's own documentation into the `demo` chatbot. Default true. */
  ingestDocs?: boolean;
}

/** What the `demo` chatbot learnt: chatsvc's documentation, or why it could not. */
export type BootstrapKnowledge = { documents: number; chunks: number } | { error: string } | null;

export interface BootstrapResult {
  organization: Organization;
  user: User;
  chatbot: Chatbot;
  key: IssuedApiKey;
  /** The bundled docs ingested into `demo`; null when `ingestDocs` was false. */
  knowledge: BootstrapKnowledge;
}

/** The parts of a service first-run setup uses. */
export interface BootstrapTarget {
  orgs: Pick<Orgs, "create">;
  users: Pick<Users, "create">;
  chatbots: Pick<Chatbots, "create">;
  keys: Pick<Keys, "create">;
  knowledge: Pick<Knowledge, "ingest">;
}

/**
 * First-run setup: an organisation, its owner, a `demo` chatbot and one API key
 * (shown once). Whoever runs it accepts the attribution obligation for that key.
 */
export async function bootstrap(
  service: BootstrapTarget,
  { organizationName = "My organization", email = "owner@example.com", ip = null, ingestDocs = true }: BootstrapOptions = {},
): Promise<BootstrapResult> {
  const organization = await service.orgs.create({ name: organizationName });
  const user = await service.users.create({ organization_id: organization.id, email, name: "Owner" });
  const chatbot = await service.chatbots.create({
    organization_id: organization.id,
    slug: "demo",
    name: "chatsvc demo",
    display_name: "chatsvc assistant",
    description: "Answers questions about chatsvc from its own documentation.",
    greeting_message: "Hi! I know chatsvc's documentation. Ask me how to install it, manage keys or use the API.",
  });
  const key = await service.keys.create({ user_id: user.id, name: "Default key", accept_attribution: true, ip });
  return { organization, user, chatbot, key, knowledge: ingestDocs ? await learnDocs(service, chatbot.slug) : null };
}

/** What first-run setup needs to happen once when several instances start together on one empty database. */
export interface FirstRunGate {
  isEmpty(): Promise<boolean>;
  settings: Pick<SettingStore, "putIfAbsent" | "put" | "get">;
}

const CLAIM_KEY = "first_run_setup";

/**
 * First-run setup unless the database already has an organisation. Instances
 * starting together on one empty database (a cluster's first deploy) would each
 * create an organisation, an owner and a key; instead the first to store its
 * claim sets up and the others wait until the organisation exists, then answer
 * undefined. A claim whose holder died before creating anything is taken over
 * once `staleMs` has passed.
 */
export async function bootstrapIfEmpty(
  service: BootstrapTarget & FirstRunGate,
  options: BootstrapOptions = {},
  { staleMs = 120_000, pollMs = 200 } = {},
): Promise<BootstrapResult | undefined> {
  const mine = `${Date.now()} ${randomUUID()}`;
  for (;;) {
    if (!(await service.isEmpty())) return undefined;
    let held = await service.settings.putIfAbsent(CLAIM_KEY, mine);
    if (held !== mine && Date.now() - Number(held.split(" ")[0]) > staleMs) {
      await service.settings.put(CLAIM_KEY, mine);
      // Two instances taking over at once both wrote; the value read back names the one that goes on.
      held = (await service.settings.get(CLAIM_KEY)) ?? held;
    }
    if (held === mine) return bootstrap(service, options);
    await sleep(pollMs);
  }
}

/**
 * Gives the demo chatbot chatsvc's own documentation (`docs/` in the package),
 * so a new user can ask it how to use chatsvc, offline. The key is already
 * issued and shown only once, so a failure here (say, an embedding server that
 * is down) is reported, not thrown.
 */
async function learnDocs(service: BootstrapTarget, slug: string): Promise<BootstrapKnowledge> {
  try {
    const report = await service.knowledge.ingest(slug, [join(packageRoot(), "docs")]);
    const failed = report.failed.map((f) => `${f.input}: ${f.error}`);
    if (failed.length > 0 && report.added + report.updated === 0) return { error: failed.join("; ") };
    return { documents: report.added + report.updated + report.skipped, chunks: report.chunks };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
