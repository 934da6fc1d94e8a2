/**
 * Yjs document names. A client opens these over sync; the server authorises by name.
 * - `workspace:<userId>`: the folder tree and note metadata;
 * - `note:<uuid>`: one note's body;
 * - `todos:<userId>`: every todo.
 */
export type DocumentRef = { kind: "workspace"; userId: number } | { kind: "note"; uuid: string } | { kind: "todos"; userId: number };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const workspaceDocName = (userId: number) => `workspace:${userId}`;
export const noteDocName = (uuid: string) => `note:${uuid}`;
export const todosDocName = (userId: number) => `todos:${userId}`;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Parses a document name; null for anything that is not exactly one of the known forms. */
export function parseDocName(name: string): DocumentRef | null {
  const separator = name.indexOf(":");
  if (separator < 0) return null;
  const kind = name.slice(0, separator);
  const id = name.slice(separator + 1);
  if (kind === "note") return isUuid(id) ? { kind, uuid: id } : null;
  if (kind === "workspace" || kind === "todos") {
    if (!/^[1-9][0-9]{0,15}$/.test(id)) return null;
    const userId = Number(id);
    return Number.isSafeInteger(userId) ? { kind, userId } : null;
  }
  return null;
}
