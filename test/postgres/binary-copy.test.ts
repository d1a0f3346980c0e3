import pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { afterAll, describe, expect, it } from "vitest";
import { createBinaryCopyParser, readBinaryCopy } from "../../src/storage/postgres/binary-copy.js";
import { testDatabaseUrl } from "../support/postgres.js";

// One connection: a COPY that failed part-way must not leave it unusable for the next query.
const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 1 });
afterAll(() => pool.end());

/** An integer, a text that may be NULL, and a bytea of `g * size` bytes: with a large size, past any one chunk of the stream. */
const rows = (size: number) => `SELECT g AS id, CASE WHEN g % 3 = 0 THEN NULL ELSE 'row ' || g END AS label,
                     decode(repeat(lpad(to_hex(g % 256), 2, '0'), g * ${size}), 'hex') AS bytes
                FROM generate_series(0, 100) g ORDER BY g`;
const ROWS = rows(2000);
const copyOf = (select: string) => `COPY (${select}) TO STDOUT (FORMAT binary)`;

function expectRows(found: (Buffer | null)[][], size = 2000) {
  expect(found).toHaveLength(101);
  found.forEach(([id, label, bytes], g) => {
    expect(id!.readInt32BE(0)).toBe(g);
    expect(label === null ? null : label.toString("utf8")).toBe(g % 3 === 0 ? null : `row ${g}`);
    expect(bytes!.length).toBe(g * size);
    expect(bytes!.every((b) => b === g % 256)).toBe(true);
  });
}

/** The raw bytes PostgreSQL sends for a binary COPY. */
async function rawCopy(select: string): Promise<Buffer> {
  const client = await pool.connect();
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of client.query(copyTo(copyOf(select)))) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } finally {
    client.release();
  }
}

describe("binary COPY from PostgreSQL", () => {
  it("reads integers, text, NULLs and large bytea as PostgreSQL stored them", async () => {
    expectRows(await readBinaryCopy(pool, copyOf(ROWS)));
    // An empty result is no rows, not a failure.
    expect(await readBinaryCopy(pool, copyOf("SELECT 1 WHERE false"))).toEqual([]);
  });

  it("parses the same rows however the bytes are split into chunks", async () => {
    for (const [rowSize, chunkSizes] of [
      [20, [1, 7, 19]],
      [2000, [1000, 65_536]],
    ] as const) {
      const raw = await rawCopy(rows(rowSize));
      for (const size of chunkSizes) {
        const parser = createBinaryCopyParser();
        for (let at = 0; at < raw.length; at += size) parser.push(raw.subarray(at, at + size));
        expectRows(parser.end(), rowSize);
      }
    }
  });

  it("refuses data that is cut short, continues past its end, or is not binary COPY at all", async () => {
    const raw = await rawCopy("SELECT 1, 'x'::text");
    const cut = createBinaryCopyParser();
    cut.push(raw.subarray(0, raw.length - 3));
    expect(() => cut.end()).toThrow("ended before its end marker");
    expect(() => createBinaryCopyParser().push(Buffer.concat([raw, Buffer.from([0, 1])]))).toThrow("continues past its end marker");
    expect(() => createBinaryCopyParser().push(Buffer.from("1\tx\n".repeat(10)))).toThrow("no PGCOPY signature");
  });

  it("fails with PostgreSQL's error when the query fails part-way, and the pool goes on working", async () => {
    // Rows stream out before the division by zero at g = 500.
    await expect(readBinaryCopy(pool, copyOf("SELECT 1 / (500 - g) FROM generate_series(1, 1000) g"))).rejects.toThrow("division by zero");
    await expect(readBinaryCopy(pool, copyOf("SELECT * FROM no_such_table"))).rejects.toThrow('relation "no_such_table" does not exist');
    expect((await pool.query<{ n: number }>("SELECT 41 + 1 AS n")).rows[0]!.n).toBe(42);
    expectRows(await readBinaryCopy(pool, copyOf(ROWS)));
  });
});
