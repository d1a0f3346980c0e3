import type pg from "pg";
import type { SettingStore } from "../../core/storage/index.js";
import { one, run, statement } from "./client.js";
import { bumpRevision } from "./revisions.js";

const get = statement("settings_get", "SELECT value FROM settings WHERE key = $1");
const put = statement(
  "settings_put",
  `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
   ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
);
// The no-op update makes RETURNING give the stored row whether this call inserted it or another instance did.
const putIfAbsent = statement(
  "settings_put_if_absent",
  `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
   ON CONFLICT (key) DO UPDATE SET key = settings.key RETURNING value`,
);

export function createPgSettingStore(pool: pg.Pool): SettingStore {
  return {
    get: async (key) => (await one<{ value: string }>(pool, get, [key]))?.value,
    async put(key, value) {
      await run(pool, put, [key, value, new Date().toISOString()]);
      await bumpRevision(pool, "settings");
    },
    async putIfAbsent(key, value) {
      const stored = (await one<{ value: string }>(pool, putIfAbsent, [key, value, new Date().toISOString()]))!.value;
      if (stored === value) await bumpRevision(pool, "settings");
      return stored;
    },
  };
}
