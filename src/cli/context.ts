import type { Command } from "commander";
import type { ChatServiceOptions } from "../core/config.js";
import type { ChatService } from "../service.js";

/**
 * Opens the service for one command with the global options (and the
 * command's own `options`), runs it and closes the database whatever happens.
 */
export async function withService<T>(command: Command, run: (service: ChatService) => T | Promise<T>, options: ChatServiceOptions = {}): Promise<T> {
  // Loaded on use, so `chatsvc --help` does not pay for SQLite, drizzle and h3.
  const { createChatService } = await import("../service.js");
  // A one-off command never starts background sync rounds (CHATSVC_SYNC_EVERY is for `serve`).
  const service = await createChatService({ syncEvery: false, ...options, ...databaseOptions(command) });
  try {
    return await run(service);
  } finally {
    await service.close();
  }
}

/** The database the global options name: `--database-url` (PostgreSQL) wins over `--db` (SQLite file). */
export function databaseOptions(command: Command): Pick<ChatServiceOptions, "db" | "database"> {
  const { db, databaseUrl } = command.optsWithGlobals<{ db?: string; databaseUrl?: string }>();
  return { ...(db && { db }), ...(databaseUrl && { database: databaseUrl }) };
}

/** Where the service keeps its data, for messages: the PostgreSQL URL without its password, or the SQLite file. */
export function databaseLabel(service: ChatService): string {
  const { database, db } = service.config;
  return database === null ? db : withoutPassword(database);
}

/** A database URL fit to print: its password replaced by `***`. */
export function withoutPassword(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (url.password) url.password = "***";
  return url.toString();
}
