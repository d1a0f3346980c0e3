import type { H3Event } from "h3";
import type { Principal } from "../core/keys.js";
import type { ChatService } from "../service.js";

/**
 * Reads the API key (`Authorization: Bearer` wins over `X-API-Key`), verifies
 * it and records the use off the request path. Throws the exact 401s.
 */
export function createAuthenticator(service: ChatService) {
  return (event: H3Event): Principal => {
    const headers = event.req.headers;
    const authorization = headers.get("authorization");
    let presented: string | null = null;
    if (authorization !== null && /^bearer\s/i.test(authorization)) presented = authorization.slice(7).trim();
    else presented = headers.get("x-api-key");
    const principal = service.keys.verify(presented);
    service.keys.touch(principal.keyId);
    (event.context as { principal?: Principal }).principal = principal;
    return principal;
  };
}
