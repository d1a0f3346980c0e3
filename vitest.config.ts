import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // Most files wait on sockets and child processes, not the CPU: more workers than cores
    // keeps both cores busy (vitest's default on 2 cores is a single worker).
    maxWorkers: 4,
    // Every file builds its own services on its own temp databases, so files can share a
    // worker's module cache: importing the service graph per file was most of the suite's CPU.
    isolate: false,
    globalSetup: ["test/support/build-cli.ts"],
  },
});
