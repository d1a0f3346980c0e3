// The request's log line is written member by member: it must be the JSON that JSON.stringify of its fields would give.
import { mockEvent } from "h3";
import { describe, expect, it } from "vitest";
import { createLogger, isoNow, logRequest, recordRequestError } from "../../src/http/logger.js";

function lineFor(setup: { route?: string; ip?: string; status?: number; aborted?: boolean; error?: unknown; path?: string }): string {
  const lines: string[] = [];
  const logger = createLogger({ level: "info", sink: (line) => lines.push(line) });
  const event = mockEvent(setup.path ?? "/api/v1/auth/test", { headers: { "x-request-id": "req.1:a_b-c" } });
  if (setup.route !== undefined) event.context.matchedRoute = { route: setup.route } as never;
  if (setup.error !== undefined) recordRequestError(event, setup.error);
  logRequest(logger, event, { status: setup.status ?? 200, started: performance.now(), ip: setup.ip, aborted: setup.aborted });
  return lines[0]!;
}

describe("the request log line", () => {
  it("is what JSON.stringify gives for its fields, in order, whatever the strings hold", () => {
    const cases = [
      { route: "/api/v1/auth/test", ip: "127.0.0.1" },
      { ip: 'a"b\\c\u0001d\n\u2028', route: "lone \ud800 surrogate and 😀", path: "/api/v1/z%C3%B6%22?q=1" },
      { status: 500, aborted: true, error: new Error('boom "quoted"') },
      { status: 404, error: new Error("missing") },
    ];
    for (const setup of cases) {
      const line = lineFor(setup);
      const parsed = JSON.parse(line) as Record<string, unknown>;
      const { time, level, msg, ...fields } = parsed;
      const expected = JSON.stringify({ time, level, msg, ...fields });
      expect(line).toBe(expected);
      expect(Object.keys(fields)).toEqual(["request_id", "method", "route", "path", "status", "duration_ms", "ip", "key_prefix", ...(setup.aborted ? ["aborted"] : []), ...(setup.error ? ["error"] : [])]);
      expect(fields).toMatchObject({ request_id: "req.1:a_b-c", route: setup.route ?? null, ip: setup.ip ?? null, status: setup.status ?? 200 });
    }
  });

  it("carries the time as toISOString gives it", () => {
    for (const ms of [0, 7, 42, 999, 1000, 1_732_625_000_123, 1_732_625_000_999, 1_732_625_001_000, 1_732_625_001_050, Date.now()]) {
      expect(isoNow(ms)).toBe(new Date(ms).toISOString());
    }
    expect(JSON.parse(lineFor({})).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});
