import type { H3Event } from "h3";
import { KEY_PREFIX, VISIBLE_PREFIX_LENGTH, type Principal } from "../core/keys.js";
import type { ChatService } from "../service.js";

/** Authenticates a request: its principal, at once when that is known without waiting (see `keys.verify`). */
export interface Authenticator {
  (event: H3Event): Principal | Promise<Principal>;
  /**
   * Re-checks the principal given for `event` against the `keys` change
   * counter read while answering it (see `keys.confirm`), where remembered
   * keys may lag behind other instances (PostgreSQL). Absent for
   * authenticators that remember no keys.
   */
  confirm?(event: H3Event, keysRevision: number): Principal | Promise<Principal>;
}

/**
 * Reads the API key (`Authorization: Bearer` wins over `X-API-Key`), verifies
 * it and records the use off the request path. Throws the exact 401s.
 */
export function createAuthenticator(service: ChatService): Authenticator {
  const admitted = (event: H3Event, principal: Principal): Principal => {
    service.keys.touch(principal.keyId);
    (event.context as { principal?: Principal }).principal = principal;
    return principal;
  };
  const authenticate: Authenticator = (event) => {
    const verified = service.keys.verify(presentedKey(event));
    return verified instanceof Promise ? verified.then((principal) => admitted(event, principal)) : admitted(event, verified);
  };
  authenticate.confirm = (event, keysRevision) => {
    const confirmed = service.keys.confirm(presentedKey(event), keysRevision);
    return confirmed instanceof Promise ? confirmed.then((principal) => admitted(event, principal)) : admitted(event, confirmed);
  };
  return authenticate;
}

/** The API key a request presents, unverified: `Authorization: Bearer` wins over `X-API-Key`. */
function presentedKey(event: H3Event): string | null {
  const headers = event.req.headers;
  const authorization = headers.get("authorization");
  if (authorization !== null && /^bearer\s/i.test(authorization)) return authorization.slice(7).trim();
  return headers.get("x-api-key");
}

/**
 * The visible prefix (`sk_live_` + 7) of the key a request presents, when it
 * looks like a key at all; listings and logs show it, so guesses may target it.
 *
 * @example
 * presentedKeyPrefix(event); // "sk_live_AbC1234" or undefined
 */
export function presentedKeyPrefix(event: H3Event): string | undefined {
  const key = presentedKey(event)?.trim();
  return key && key.startsWith(KEY_PREFIX) && key.length >= VISIBLE_PREFIX_LENGTH ? key.slice(0, VISIBLE_PREFIX_LENGTH) : undefined;
}
