import { describe, expect, it } from "vitest";
import { createRateLimiter } from "../../src/net/token-buckets.js";

const clock = () => {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
};

describe("createRateLimiter", () => {
  it("allows a burst up to capacity, then refuses with the wait until one token is back", () => {
    const c = clock();
    const limiter = createRateLimiter({ capacity: 3, refillPerSecond: 0.5, now: c.now });
    expect([1, 2, 3].map(() => limiter.take("ip").ok)).toEqual([true, true, true]);
    const refused = limiter.take("ip");
    expect(refused).toMatchObject({ ok: false, remaining: 0, retryAfterSeconds: 2 });
    expect(refused.resetMs).toBe(6000);
    c.advance(1999);
    expect(limiter.take("ip").ok).toBe(false);
    c.advance(1);
    expect(limiter.take("ip")).toMatchObject({ ok: true, remaining: 0, retryAfterSeconds: 0 });
  });

  it("keeps keys apart", () => {
    const limiter = createRateLimiter({ capacity: 1, refillPerSecond: 1, now: () => 0 });
    expect(limiter.take("a").ok).toBe(true);
    expect(limiter.take("a").ok).toBe(false);
    expect(limiter.take("b").ok).toBe(true);
  });

  it("never refills above capacity, however long a key was idle", () => {
    const c = clock();
    const limiter = createRateLimiter({ capacity: 2, refillPerSecond: 10, now: c.now });
    limiter.take("k");
    c.advance(3_600_000);
    expect(limiter.take("k").remaining).toBe(1);
    expect(limiter.take("k").ok).toBe(true);
    expect(limiter.take("k").ok).toBe(false);
  });

  it("drops buckets that have refilled, so memory follows active keys, not all keys ever seen", () => {
    const c = clock();
    const limiter = createRateLimiter({ capacity: 5, refillPerSecond: 5, now: c.now });
    for (let i = 0; i < 1000; i++) limiter.take(`visitor-${i}`);
    expect(limiter.size).toBe(1000);
    c.advance(1000);
    for (let i = 0; i < 1000; i++) limiter.take(`later-${i}`);
    expect(limiter.size).toBeLessThanOrEqual(1000);
    expect(limiter.size).toBeGreaterThanOrEqual(1000 - 1);
    c.advance(1000);
    for (let i = 0; i < 10; i++) limiter.take(`last-${i}`);
    expect(limiter.size).toBeLessThan(1000);
  });

  it("holds at most maxKeys buckets, evicting the least recently used", () => {
    const limiter = createRateLimiter({ capacity: 1, refillPerSecond: 0.001, maxKeys: 100, now: () => 0 });
    limiter.take("busy");
    for (let i = 0; i < 500; i++) {
      limiter.take(`flood-${i}`);
      if (i % 50 === 0) expect(limiter.take("busy").ok).toBe(false);
    }
    expect(limiter.size).toBe(100);
    // Still remembered: it was used recently, the flood's oldest keys went first.
    expect(limiter.take("busy").ok).toBe(false);
    expect(limiter.take("flood-0").ok).toBe(true);
  });

  it("rejects settings that would never let a request through", () => {
    expect(() => createRateLimiter({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError);
    expect(() => createRateLimiter({ capacity: 1, refillPerSecond: 0 })).toThrow(RangeError);
  });
});
