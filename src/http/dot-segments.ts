import type { H3Event } from "h3";
import { ChatsvcError } from "../core/errors.js";

// A `.` or `..` path segment, literal or percent-encoded, between `/` or `\` (which URL parsing treats as `/`).
const DOT_SEGMENT = /(?:^|[/\\])(?:\.|%2e){1,2}(?=[/\\]|$)/i;
// The scheme and authority of an absolute-form request target (`GET http://host/path HTTP/1.1`).
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/\\]*/i;

/**
 * True when the path of a raw request target has a `.` or `..` segment. URL
 * parsing resolves them (WHATWG rules, which h3 and srvx follow), so
 * `/widget/x/%2e%2e/%2e%2e/api/v1/auth/test` would run an API route although
 * a reverse proxy, a log reader or an allow-list saw a widget path.
 *
 * @example
 * hasDotSegments("/widget/x/%2e%2e/api/v1/auth/test"); // true
 * hasDotSegments("/widget.js?next=../x"); // false
 */
export function hasDotSegments(target: string): boolean {
  const path = target.replace(ABSOLUTE_FORM, "").split(/[?#]/, 1)[0]!;
  return DOT_SEGMENT.test(path);
}

/**
 * Refuses (400) a request whose target, as the client sent it, has dot
 * segments. Over Node the raw target is still at hand; elsewhere the runtime
 * parsed the URL (and resolved them) before chatsvc sees it.
 *
 * @example
 * refuseDotSegments(event); // throws a 400 ChatsvcError for /widget/x/../../api/v1/auth/test
 */
export function refuseDotSegments(event: H3Event): void {
  const target = event.runtime?.node?.req?.url;
  if (target !== undefined && hasDotSegments(target)) throw ChatsvcError.badRequest("The request path must not contain . or .. segments");
}
