import type { H3Event } from "h3";
import type { ChatService } from "../service.js";
import type { Envelope, ErrorEnvelope } from "./envelope.js";
import { logRequestAt, recordRequestError } from "./logger.js";

/** Where `chatsvc serve` answers health checks: at the root, outside `/api/v1`, as load balancers expect. */
export const HEALTH_PATH = "/healthz";

/**
 * The health check for load balancers: no API key, no data, not rate
 * limited. 200 `{success: true, data: {status: "ok"}}` while the database
 * takes writes ({@link ChatService.health}); 503 once it does not (a full or
 * read-only disk, a closed service), so the balancer takes the instance out.
 * The reason goes to the request's log line only. Healthy answers are logged
 * at `debug` only, as probes come every few seconds.
 *
 * @example
 * app.get("/healthz", createHealthHandler(service));
 */
export function createHealthHandler(service: ChatService) {
  return async (event: H3Event): Promise<Envelope<{ status: "ok" }> | ErrorEnvelope> => {
    event.res.headers.set("cache-control", "no-store");
    const health = await service.health();
    if (!health.ok) {
      event.res.status = 503;
      recordRequestError(event, { message: health.reason });
      return { success: false, message: "Service unavailable" };
    }
    logRequestAt(event, "debug");
    return { success: true, data: { status: "ok" } };
  };
}
