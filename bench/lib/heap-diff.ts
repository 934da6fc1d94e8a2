/**
 * What two heap snapshots of one process differ by: the objects in `after` that were not in `before`
 * (V8 keeps an object's snapshot id for its life), grouped by kind and constructor (or function) name,
 * with each group's most common retainer, so "what does an open note cost" reads as a short table.
 * Used by `npm run bench -- scale` when `BENCH_SCALE_HEAP_SNAPSHOTS` names a directory; runnable alone:
 * `npx tsx bench/lib/heap-diff.ts before.heapsnapshot after.heapsnapshot [per]`.
 */
import { readFile } from "node:fs/promises";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface HeapGroup {
  readonly group: string;
  readonly count: number;
  readonly bytes: number;
  /** The most common retainer of the group's objects: `kind:name.edge`. */
  readonly retainer: string;
}

async function load(file: string): Promise<Snapshot> {
  return JSON.parse(await readFile(file, "utf8")) as Snapshot;
}

function ids(snapshot: Snapshot): Set<number> {
  const fields = snapshot.snapshot.meta.node_fields;
  const width = fields.length;
  const idAt = fields.indexOf("id");
  const out = new Set<number>();
  for (let i = 0; i < snapshot.nodes.length; i += width) out.add(snapshot.nodes[i + idAt] as number);
  return out;
}

/** The objects of `after` not in `before`, grouped; largest first. */
export async function heapDiff(beforeFile: string, afterFile: string): Promise<HeapGroup[]> {
  const before = ids(await load(beforeFile));
  const after = await load(afterFile);
  const { node_fields, node_types, edge_fields, edge_types } = after.snapshot.meta;
  const width = node_fields.length;
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = ["type", "name", "id", "self_size", "edge_count"].map((f) =>
    node_fields.indexOf(f),
  ) as [number, number, number, number, number];
  const edgeWidth = edge_fields.length;
  const [edgeTypeAt, edgeNameAt, toAt] = ["type", "name_or_index", "to_node"].map((f) => edge_fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const kinds = node_types[0];
  const edgeKinds = edge_types[0];
  const { nodes, edges, strings } = after;
  const label = (node: number) => {
    const kind = kinds[nodes[node + typeAt] as number] ?? "?";
    const name = strings[nodes[node + nameAt] as number] ?? "?";
    return kind === "string" || kind === "concatenated string" || kind === "sliced string" ? kind : `${kind}:${name.slice(0, 60)}`;
  };
  // One retainer per new object: the first strong edge found pointing at it.
  const retainerOf = new Map<number, string>();
  let edge = 0;
  for (let node = 0; node < nodes.length; node += width) {
    const count = nodes[node + edgeCountAt] as number;
    for (let e = 0; e < count; e++, edge += edgeWidth) {
      const to = edges[edge + toAt] as number;
      const edgeKind = edgeKinds[edges[edge + edgeTypeAt] as number];
      if (edgeKind === "weak" || retainerOf.has(to) || before.has(nodes[to + idAt] as number)) continue;
      const nameOrIndex = edges[edge + edgeNameAt] as number;
      const edgeName = edgeKind === "element" || edgeKind === "hidden" ? `[${nameOrIndex}]` : (strings[nameOrIndex] ?? "?");
      retainerOf.set(to, `${label(node)}.${edgeName.slice(0, 40)}`);
    }
  }
  const groups = new Map<string, { count: number; bytes: number; retainers: Map<string, number> }>();
  for (let node = 0; node < nodes.length; node += width) {
    if (before.has(nodes[node + idAt] as number)) continue;
    const key = label(node);
    let group = groups.get(key);
    if (!group) {
      group = { count: 0, bytes: 0, retainers: new Map() };
      groups.set(key, group);
    }
    group.count++;
    group.bytes += nodes[node + sizeAt] as number;
    const retainer = retainerOf.get(node) ?? "-";
    group.retainers.set(retainer, (group.retainers.get(retainer) ?? 0) + 1);
  }
  return [...groups]
    .map(([group, { count, bytes, retainers }]) => ({
      group,
      count,
      bytes,
      retainer: [...retainers].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "-",
    }))
    .sort((a, b) => b.bytes - a.bytes);
}

/** `groups` less `baseline`, group by group (the retainer is `groups`'), largest difference first. */
export function subtractGroups(groups: readonly HeapGroup[], baseline: readonly HeapGroup[]): HeapGroup[] {
  const base = new Map(baseline.map((g) => [g.group, g]));
  const out = groups.map((g) => ({
    ...g,
    count: g.count - (base.get(g.group)?.count ?? 0),
    bytes: g.bytes - (base.get(g.group)?.bytes ?? 0),
  }));
  const seen = new Set(groups.map((g) => g.group));
  for (const g of baseline) if (!seen.has(g.group)) out.push({ ...g, count: -g.count, bytes: -g.bytes });
  return out.sort((a, b) => Math.abs(b.bytes) - Math.abs(a.bytes));
}

/** The largest groups as text lines, per `per` (e.g. per open note). */
export function formatHeapDiff(groups: readonly HeapGroup[], per: number, top = 40): string {
  const total = groups.reduce((sum, g) => sum + g.bytes, 0);
  const lines = [`new objects: ${(total / per / 1024).toFixed(2)} KiB per unit (${per} units)`];
  for (const g of groups.slice(0, top)) {
    lines.push(
      `${(g.bytes / per).toFixed(0).padStart(7)} B ${(g.count / per).toFixed(1).padStart(7)}×  ${g.group.padEnd(48)} ← ${g.retainer}`,
    );
  }
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [beforeFile, afterFile, per = "1"] = process.argv.slice(2);
  if (!beforeFile || !afterFile) throw new Error("usage: heap-diff.ts before.heapsnapshot after.heapsnapshot [per]");
  console.log(formatHeapDiff(await heapDiff(beforeFile, afterFile), Number(per), 60));
}
