// The write gate between the event loop's SQLite connection and the knowledge writer thread's (write-gate.ts).
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { createWriteGate } from "../../src/storage/sqlite/write-gate.js";

/**
 * A thread that takes the gate the way the writer thread does, holds it `holdMs`, notes in `released[0]`
 * that its transaction ended, then lets go and posts "done".
 */
function writerThread(cells: Int32Array, holdMs: number, released = new Int32Array(new SharedArrayBuffer(4))): Worker {
  const source = `
    const { workerData, parentPort } = require("node:worker_threads");
    const { cells, holdMs, released } = workerData;
    Atomics.store(cells, 0, 1);
    while (Atomics.load(cells, 1) !== 0) Atomics.wait(cells, 1, 1);
    parentPort.postMessage("holding");
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, holdMs);
    Atomics.store(released, 0, 1);
    Atomics.store(cells, 0, 0);
    Atomics.notify(cells, 0);
    parentPort.postMessage("done");`;
  return new Worker(source, { eval: true, workerData: { cells, holdMs, released } });
}

describe("SQLite write gate", () => {
  it("runs a write at once, in the calling turn, while no writer holds the gate", () => {
    const gate = createWriteGate();
    expect(gate.run(() => 42)).toBe(42);
  });

  it("holds a write while the writer thread's transaction runs, without blocking timers, and runs it after", async () => {
    const gate = createWriteGate();
    const released = new Int32Array(new SharedArrayBuffer(4));
    const writer = writerThread(gate.cells, 300, released);
    await new Promise<void>((resolve) => writer.once("message", () => resolve()));
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    const written = gate.run(() => ({ ticks, afterWriter: Atomics.load(released, 0) === 1 }));
    expect(written).toBeInstanceOf(Promise);
    const seen = await written;
    clearInterval(ticking);
    expect(seen.afterWriter).toBe(true);
    expect(seen.ticks).toBeGreaterThan(0);
    await writer.terminate();
  });

  it("runs a write made inside another write at once, even when the writer asks for the gate meanwhile", async () => {
    const gate = createWriteGate();
    let writer: Worker | undefined;
    const outer = gate.run(() => {
      writer = writerThread(gate.cells, 0);
      // The writer raises its flag and waits for this write to end.
      while (Atomics.load(gate.cells, 0) === 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      return gate.run(() => "inner");
    });
    expect(outer).toBe("inner");
    await new Promise<void>((resolve) => writer!.on("message", (m: string) => m === "done" && resolve()));
    await writer!.terminate();
  });
});
