import type pg from "pg";
import { to as copyTo } from "pg-copy-streams";

/** One row of a binary COPY: each column's bytes in PostgreSQL's binary format, null for NULL. */
export type BinaryRow = (Buffer | null)[];

const SIGNATURE = Buffer.from("PGCOPY\n\xff\r\n\0", "latin1");
/** Signature, flags (int32), header extension length (int32). */
const HEADER = SIGNATURE.length + 8;

/**
 * Runs `COPY (...) TO STDOUT (FORMAT binary)` on a pooled connection and
 * answers its rows. node-postgres reads every result as text, where a bytea
 * column arrives hex-encoded: twice its size on the wire, then decoded from
 * UTF-8 and from hex. Binary COPY sends the bytes themselves, and that text
 * was most of what loading a chatbot's vectors cost (bench scenario 2's first
 * search on PostgreSQL). A connection whose COPY failed part-way is closed, not reused.
 *
 * @example
 * const rows = await readBinaryCopy(pool, "COPY (SELECT id, embedding FROM chunk_embeddings) TO STDOUT (FORMAT binary)");
 * rows[0][0]!.readInt32BE(0); // the first row's id
 */
export async function readBinaryCopy(pool: pg.Pool, sql: string): Promise<BinaryRow[]> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    const parser = createBinaryCopyParser();
    for await (const chunk of client.query(copyTo(sql))) parser.push(chunk as Buffer);
    return parser.end();
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(failure);
  }
}

/**
 * Parses PostgreSQL's binary COPY format (a header, then per row a field
 * count and each field's length and bytes, then -1) from chunks split
 * anywhere. Fields are views into the chunks, not copies (a row split
 * between two chunks into the copy that joins its parts).
 */
export function createBinaryCopyParser(): { push(chunk: Buffer): void; end(): BinaryRow[] } {
  const rows: BinaryRow[] = [];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Bytes, from the start of the incomplete row (or of the header), that parsing needs before it can go on. */
  let needed = HEADER;
  let headerRead = false;
  let ended = false;

  /** Parses what `buffer` holds from the start; answers where the first incomplete part begins. */
  const parse = (buffer: Buffer): number => {
    let at = 0;
    if (!headerRead) {
      if (buffer.length < HEADER) return (needed = HEADER), 0;
      if (!buffer.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error("Not PostgreSQL binary COPY data (no PGCOPY signature)");
      // Bit 16 of the flags: an OID column leads each row, which no query here asks for.
      if (buffer.readUInt32BE(SIGNATURE.length) & (1 << 16)) throw new Error("Binary COPY data with OIDs is not supported");
      const extension = buffer.readUInt32BE(SIGNATURE.length + 4);
      if (buffer.length < HEADER + extension) return (needed = HEADER + extension), 0;
      at = HEADER + extension;
      headerRead = true;
    }
    while (!ended) {
      if (buffer.length - at < 2) return (needed = 2), at;
      const fields = buffer.readInt16BE(at);
      if (fields === -1) {
        ended = true;
        return at + 2;
      }
      let end = at + 2;
      const row: BinaryRow = [];
      for (let i = 0; i < fields; i++) {
        if (buffer.length - end < 4) return (needed = end + 4 - at), at;
        const length = buffer.readInt32BE(end);
        end += 4;
        if (length === -1) {
          row.push(null);
          continue;
        }
        if (buffer.length - end < length) return (needed = end + length - at), at;
        row.push(buffer.subarray(end, end + length));
        end += length;
      }
      rows.push(row);
      at = end;
    }
    return at;
  };

  return {
    push(chunk) {
      if (ended) {
        if (chunk.length > 0) throw new Error("Binary COPY data continues past its end marker");
        return;
      }
      let rest = chunk;
      // The part the last chunk left incomplete (a field count, a field's length, a field) is completed from the
      // head of this one: only that part is copied, never the whole chunk, and a large field once.
      while (pendingBytes > 0) {
        if (pendingBytes + rest.length < needed) {
          pending.push(rest);
          pendingBytes += rest.length;
          return;
        }
        const take = needed - pendingBytes;
        const joined = Buffer.concat([...pending, rest.subarray(0, take)]);
        rest = rest.subarray(take);
        // Either the row is still incomplete (and `needed` grew), or it ends exactly where `joined` does.
        const parsed = parse(joined);
        pending = parsed === 0 ? [joined] : [];
        pendingBytes = parsed === 0 ? joined.length : 0;
      }
      const tail = rest.subarray(parse(rest));
      if (ended && tail.length > 0) throw new Error("Binary COPY data continues past its end marker");
      pending = tail.length > 0 ? [tail] : [];
      pendingBytes = tail.length;
    },
    end() {
      if (!ended) throw new Error("Binary COPY data ended before its end marker");
      return rows;
    },
  };
}
