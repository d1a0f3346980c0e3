import { Agent, request } from "node:http";
import autocannon from "autocannon";

/**
 * HTTP load with autocannon over keep-alive connections to 127.0.0.1, bounded
 * by `durationS` or `amount`. Latency percentiles are autocannon's (whole
 * milliseconds); use {@link timeRequests} where sub-millisecond matters.
 *
 * @example
 * const r = await load({ url: `${base}/api/v1/auth/test`, connections: 10, durationS: 5, headers });
 * r.rps; r.p99;
 */
export async function load({ url, connections = 10, durationS, amount, method = "GET", headers = {}, body, requests, timeoutS = 30 }) {
  if (!new URL(url).hostname.match(/^127\.0\.0\.1$/)) throw new Error("bench load only targets 127.0.0.1");
  const started = performance.now();
  let lastResponse = started;
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon(
      { url, connections, ...(amount ? { amount } : { duration: durationS }), method, headers, body, requests, timeout: timeoutS },
      (error, done) => (error ? reject(error) : resolve(done)),
    );
    instance.on("response", () => (lastResponse = performance.now()));
  });
  return {
    // autocannon counts requests per second of its ticker and ends on a tick, so a run bounded by
    // `amount` is rounded up to whole seconds (3,000 answers in 1.73 s: 1,500/s); its rate is
    // taken up to its last answer instead.
    rps: amount ? result.requests.total / ((lastResponse - started) / 1000) : result.requests.average,
    total: result.requests.total,
    /** When the last answer arrived (`performance.now()`). */
    lastAt: lastResponse,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
  };
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One request over a kept-alive socket; resolves with `{status, body, ms}`. */
export function send(url, { method = "GET", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method, headers, agent }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString("utf8"), ms: performance.now() - started }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
