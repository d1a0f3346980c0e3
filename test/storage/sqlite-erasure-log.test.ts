// SQLite only: an erasure empties the write-ahead log, whose older frames still hold the erased rows.
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createChatService } from "../../src/service.js";
import { testEngine } from "../support/database.js";
import { tempDir } from "../support/harness.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Another process's checkpoint, as SQLite's other connections see it: a lock on the checkpoint byte
 * of the WAL index (the `-shm` file, byte 121; see "WAL-index format" in SQLite's file format
 * documentation), held by a process of its own until `release` is called. Node cannot take such a
 * lock itself: the holder is python3 (.ci/run installs it where it is missing).
 */
async function checkpointLockHeld(file: string): Promise<{ release(): Promise<void> }> {
  const holder = spawn(
    "python3",
    ["-c", "import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\nfcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 121)\nprint('held', flush=True)\nsys.stdin.read()", `${file}-shm`],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => holder.once("exit", () => resolve()));
  const release = async () => {
    holder.stdin!.end();
    await exited;
  };
  cleanups.push(release);
  await new Promise<void>((resolve, reject) => {
    holder.stdout!.once("data", () => resolve());
    holder.once("error", (error) => reject(new Error(`python3 could not start: ${error.message}`)));
    holder.once("exit", (code) => reject(new Error(`the lock holder exited (${code})`)));
  });
  return { release };
}

describe.skipIf(testEngine === "postgres")("erasure on SQLite", () => {
  it("empties the log once another process's checkpoint is done, when one was running at the time", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const db = join(dir.dir, "chatsvc.db");
    const service = await createChatService({ env: {}, logLevel: "warn", renderWorker: false, db });
    cleanups.push(() => service.close());
    await service.bootstrap({ ingestDocs: false });
    const org = (await service.chatbots.get("demo")).organization_id;
    const { conversation_id } = await service.conversations.start(org, "demo", { visitor_id: "v-erased" });
    await service.chat.send(org, "demo", conversation_id, { message: "Where do visitors park, asks Quentin Erasable?" });

    // From now on every other connection's checkpoint is refused at once (the probe's, the service's), busy handler or not.
    const checkpoint = await checkpointLockHeld(db);
    const probe = new Database(db, { fileMustExist: true });
    cleanups.push(() => probe.close());
    expect((probe.pragma("wal_checkpoint(PASSIVE)") as { busy: number }[])[0]!.busy).toBe(1);
    setTimeout(() => void checkpoint.release(), 200);

    const counts = await service.privacy.eraseVisitor(org, { visitor_id: "v-erased" }, { actor: "test" });
    expect(counts).toMatchObject({ conversations: 1, messages: 2 });
    expect(statSync(`${db}-wal`).size).toBe(0);
    expect(readFileSync(db).toString("latin1")).not.toContain("Quentin Erasable");
  });
});
