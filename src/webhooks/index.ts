import type { ResolvedConfig } from "../core/config.js";
import type { EventBus, EventName } from "../core/events.js";
import type { Storage } from "../core/storage/index.js";
import { createSender } from "./deliver.js";
import { createWebhookRegistry, type WebhookRegistry } from "./registry.js";
import { createDeliveryWorker } from "./worker.js";

export type { RegisterWebhookInput, RegisteredWebhook, Webhook, WebhookFailure, WebhookRegistry, WebhookTestOutcome } from "./registry.js";
export { verifyWebhook, signWebhook, type VerifyWebhookOptions, type WebhookHeaders } from "./signing.js";

/** How long `close()` waits for deliveries in flight before leaving them for the next start. */
const SHUTDOWN_GRACE_MS = 2_000;

/**
 * The body every subscriber of an event receives (and that is signed):
 * `{"event": name, "data": payload}`. Storage writes it into the outbox rows.
 */
export function encodeWebhookEvent(name: EventName, data: unknown): string {
  return JSON.stringify({ event: name, data });
}

export interface WebhookRuntime {
  /** The registry the service exposes as `service.webhooks`. */
  registry: WebhookRegistry;
  /** Stops delivering (bounded wait for deliveries in flight); call before closing the database. */
  close(): Promise<void>;
}

/**
 * Wires webhooks into a service: the registry, and the delivery worker,
 * started at once so rows a previous process left pending go out, and woken
 * when a committed event queued deliveries.
 *
 * @example
 * const runtime = createWebhookRuntime(storage, events, config);
 * await runtime.registry.register(orgId, { url, events: ["lead_captured"] });
 * await runtime.close();
 */
export function createWebhookRuntime(storage: Pick<Storage, "webhooks" | "outbox" | "watchOutbox">, events: EventBus, config: ResolvedConfig): WebhookRuntime {
  const sender = createSender(config.webhooks);
  const worker = createDeliveryWorker(storage.outbox, sender, config.webhooks);
  events.onRecorded(({ deliveries }) => {
    if (deliveries > 0) worker.wake();
  });
  // Rows another instance queued: its notification saves this worker part of its poll interval.
  const unwatch = storage.watchOutbox?.(() => worker.wake());
  worker.start();
  return {
    registry: createWebhookRegistry(storage.webhooks, config.webhooks, sender),
    close: () => {
      unwatch?.();
      return worker.stop(SHUTDOWN_GRACE_MS);
    },
  };
}
