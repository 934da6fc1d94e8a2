import * as Y from "yjs";

/**
 * Creates or updates the entry `uuid` of the top-level map `mapName`, setting the given fields
 * (undefined ones are left alone, unchanged ones are not rewritten). Call inside a transaction.
 */
export function putEntry(doc: Y.Doc, mapName: string, uuid: string, fields: Record<string, unknown>): void {
  const map = doc.getMap<Y.Map<unknown>>(mapName);
  let entry = map.get(uuid);
  if (!(entry instanceof Y.Map)) {
    entry = new Y.Map<unknown>();
    map.set(uuid, entry);
  }
  for (const [key, value] of Object.entries(fields)) {
    // Arrays are values, not shared types: compare their contents, not their identity.
    const current = entry.get(key);
    const same = Array.isArray(value) ? JSON.stringify(current) === JSON.stringify(value) : current === value;
    if (value !== undefined && !same) entry.set(key, value);
  }
}
