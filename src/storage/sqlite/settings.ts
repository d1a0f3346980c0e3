import type { SettingStore } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

export function createSettingStore(sqlite: Sqlite): SettingStore {
  const read = sqlite.prepare<[string], string>("SELECT value FROM settings WHERE key = ?").pluck();
  const write = sqlite.prepare<[string, string, string]>(
    "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  );
  const writeIfAbsent = sqlite.prepare<[string, string, string]>("INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO NOTHING");

  return {
    async get(key) {
      return read.get(key);
    },
    async put(key, value) {
      write.run(key, value, new Date().toISOString());
    },
    async putIfAbsent(key, value) {
      writeIfAbsent.run(key, value, new Date().toISOString());
      return read.get(key)!;
    },
  };
}
