import { MAX_TYPE_DEPTH } from "@tandem/core";
import * as Y from "yjs";

/** Why an update cannot be measured against the document. */
export const UNKNOWN_PARENT = Symbol("unknown parent");

type Struct = Y.Item | Y.GC;

/** The struct holding `id` in a clock-ordered list of one client's structs, if any. */
function findIn(structs: readonly Struct[] | undefined, clock: number): Struct | undefined {
  if (!structs || structs.length === 0) return undefined;
  const last = structs[structs.length - 1] as Struct;
  if (clock >= last.id.clock + last.length || clock < (structs[0] as Struct).id.clock) return undefined;
  return structs[Y.findIndexSS(structs as Struct[], clock)];
}

/** The level of an integrated item: 1 under a root type, one more per type above it (capped). */
function integratedLevel(item: Struct, cap: number): number {
  if (!(item instanceof Y.Item) || !(item.parent instanceof Y.AbstractType)) return 0;
  let level = 1;
  for (let type = item.parent; type._item !== null && level <= cap; level++) {
    type = type._item.parent as Y.AbstractType<unknown>;
  }
  return level;
}

/**
 * The deepest level at which `update` would create a type in `doc`, without applying it: each
 * item's parent is named in the update or inherited from its neighbour (origin), which may be in
 * the update or already in the document. Walks with an explicit stack and memo, since the update
 * may nest far deeper than recursion allows. An item attached to content neither holds (Yjs
 * would keep it pending and integrate it later, unmeasured) yields {@link UNKNOWN_PARENT}.
 */
export function updateDepth(doc: Y.Doc, update: Uint8Array, cap = MAX_TYPE_DEPTH): number | typeof UNKNOWN_PARENT {
  const { structs } = Y.decodeUpdate(update);
  const byClient = new Map<number, Struct[]>();
  for (const struct of structs) {
    if (struct instanceof Y.Skip) continue;
    const list = byClient.get(struct.id.client) ?? [];
    list.push(struct as Struct);
    byClient.set(struct.id.client, list);
  }
  const inDoc = (id: Y.ID) => findIn(doc.store.clients.get(id.client) as Struct[] | undefined, id.clock);
  const inUpdate = (id: Y.ID) => findIn(byClient.get(id.client), id.clock);
  const levels = new Map<Struct, number>();

  const levelOf = (start: Y.Item): number | typeof UNKNOWN_PARENT => {
    // Follow parents (one level up) and origins (same level) until a known level, then unwind.
    const chain: [Struct, number][] = [];
    let current: Struct = start;
    let integrated = false;
    let base = 0;
    for (;;) {
      const known = levels.get(current);
      if (known !== undefined) {
        base = known;
        break;
      }
      if (integrated) {
        base = integratedLevel(current, cap);
        break;
      }
      // A GC struct's content is gone, and so is anything attached to it; a cycle is malformed.
      if (!(current instanceof Y.Item) || chain.length > structs.length) break;
      const parent: Y.Item["parent"] | string = current.parent;
      if (typeof parent === "string") {
        chain.push([current, 1]);
        break;
      }
      const next: Y.ID | null = parent instanceof Y.ID ? parent : (current.origin ?? current.rightOrigin);
      if (next === null) break;
      chain.push([current, parent instanceof Y.ID ? 1 : 0]);
      const fromDoc = inDoc(next);
      integrated = fromDoc !== undefined;
      const found: Struct | undefined = fromDoc ?? inUpdate(next);
      if (found === undefined) return UNKNOWN_PARENT;
      current = found;
    }
    let level = base;
    for (let i = chain.length - 1; i >= 0; i--) {
      const [struct, step] = chain[i] as [Struct, number];
      level += step;
      levels.set(struct, level);
    }
    return levels.get(start) ?? level;
  };

  let deepest = 0;
  for (const struct of structs) {
    if (!(struct instanceof Y.Item) || !(struct.content instanceof Y.ContentType)) continue;
    const level = levelOf(struct);
    if (level === UNKNOWN_PARENT) return level;
    deepest = Math.max(deepest, level);
  }
  return deepest;
}
