import { randomFillSync } from "node:crypto";

/** Random bytes are drawn from the CSPRNG in blocks of this size: one call per block instead of one per id. */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let offset = POOL_BYTES;

function randomPart(bytes: number): Buffer {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += bytes;
  return pool.subarray(offset - bytes, offset);
}

/**
 * The current time in milliseconds as fixed-width base36: a prefix that makes ids sort by creation time.
 *
 * @example
 * timePrefix(); // "0mhx3k2a1"
 */
export function timePrefix(now = Date.now()): string {
  return now.toString(36).padStart(9, "0");
}

/**
 * An unguessable id that sorts by creation time: {@link timePrefix}, then
 * `bytes` random bytes. Rows keyed by it land at the end of their unique index
 * instead of on a random page of it, so a commit of many new rows writes a few
 * index pages rather than one per row.
 *
 * @example
 * timeSortedId(24, "base64url"); // "0mhx3k2a1" + 32 random characters
 */
export function timeSortedId(bytes: number, encoding: "hex" | "base64url"): string {
  return timePrefix() + randomPart(bytes).toString(encoding);
}
