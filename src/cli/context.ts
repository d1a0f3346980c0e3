import type { Command } from "commander";
import type { ChatServiceOptions } from "../core/config.js";
import type { ChatService } from "../service.js";

/**
 * Opens the service for one command with the global options (and the
 * command's own `options`), runs it and closes the database whatever happens.
 */
export async function withService<T>(command: Command, run: (service: ChatService) => T | Promise<T>, options: ChatServiceOptions = {}): Promise<T> {
  const { db } = command.optsWithGlobals<{ db?: string }>();
  // Loaded on use, so `chatsvc --help` does not pay for SQLite, drizzle and h3.
  const { createChatService } = await import("../service.js");
  const service = await createChatService({ ...options, ...(db && { db }) });
  try {
    return await run(service);
  } finally {
    await service.close();
  }
}
