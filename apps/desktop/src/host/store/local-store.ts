import type { Kysely } from "kysely";
import type { LocalStore } from "../host-context";
import type { LocalSchema } from "./local-schema";

/** Opens (creating if needed) the local SQLite database in `dataDir`. Stub until the store is built. */
export async function openLocalStore(_dataDir: string): Promise<LocalStore> {
  const settings = new Map<string, string>();
  return {
    db: undefined as unknown as Kysely<LocalSchema>,
    getSetting: async (key) => settings.get(key) ?? null,
    setSetting: async (key, value) => {
      if (value === null) settings.delete(key);
      else settings.set(key, value);
    },
    close: async () => {},
  };
}
