import type { ResolvedConfig } from "../config.js";
import type { Db } from "../core/db/open.js";
import type { EventBus } from "../core/events.js";
import { createSender } from "./deliver.js";
import { createOutboxHook } from "./outbox.js";
import { createWebhookRegistry, type WebhookRegistry } from "./registry.js";
import { createDeliveryWorker } from "./worker.js";

export type { RegisterWebhookInput, RegisteredWebhook, Webhook, WebhookFailure, WebhookRegistry } from "./registry.js";
export { verifyWebhook, signWebhook, type VerifyWebhookOptions, type WebhookHeaders } from "./signing.js";

/** How long `close()` waits for deliveries in flight before leaving them for the next start. */
const SHUTDOWN_GRACE_MS = 2_000;

export interface WebhookRuntime {
  /** The registry the service exposes as `service.webhooks`. */
  registry: WebhookRegistry;
  /** Stops delivering (bounded wait for deliveries in flight); call before closing the database. */
  close(): Promise<void>;
}

/**
 * Wires webhooks into a service: the registry, the outbox hook on the event
 * bus (delivery rows written in the transaction of the change) and the
 * delivery worker, started at once so rows a previous process left pending
 * go out.
 *
 * @example
 * const runtime = createWebhookRuntime(db, events, config);
 * await runtime.registry.register(orgId, { url, events: ["lead_captured"] });
 * await runtime.close();
 */
export function createWebhookRuntime(db: Db, events: EventBus, config: ResolvedConfig): WebhookRuntime {
  const sender = createSender(config.webhooks);
  const worker = createDeliveryWorker(db.$client, sender, config.webhooks);
  events.addTransactionalHook(createOutboxHook(db.$client, () => worker.wake()));
  worker.start();
  return {
    registry: createWebhookRegistry(db, config.webhooks),
    close: () => worker.stop(SHUTDOWN_GRACE_MS),
  };
}
