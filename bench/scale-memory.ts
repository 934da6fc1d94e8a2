/**
 * `npm run bench -- scale`, documents open at once on one instance, for notes of two sizes
 * (`BENCH_SCALE_NOTE_WORDS`): `BENCH_SCALE_OPEN_NOTES` notes of each (seeded in a child process
 * straight into the PostgreSQL schema) opened at once over sync on instance 1 by providers in a child
 * process (their own copies are not counted here), and this process's RSS and heap before and while
 * they are open: what one open note costs an instance with PostgreSQL and Redis. The same-run floor:
 * the same notes loaded from the store as plain `Y.Doc`s in this process, what any server that holds
 * them in memory pays; the difference is what the server adds to a note.
 *
 * Each reading is taken twice: after a full GC (the heap pages that loading grew stay reserved), and
 * after V8's memory-reducing GC, which gives them back as its memory reducer does on an idle server.
 * With `BENCH_SCALE_HEAP_SNAPSHOTS=<dir>`, heap snapshots with none and all open are written there and
 * their difference (the new objects, by constructor) is printed per note.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { ALL_SCOPES, noteDocName } from "@tandem/core";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import type { RunningServer } from "../apps/server/src/server";
import { startChild } from "./lib/child";
import { positiveIntFromEnv, stringFromEnv } from "./lib/env";
import { formatHeapDiff, heapDiff, subtractGroups } from "./lib/heap-diff";
import { formatMs } from "./lib/latency";
import { type MemoryReading, settledMemory } from "./lib/memory";
import { DEFAULT_SEED_OPTIONS } from "./lib/notes-seed";
import { formatTable } from "./lib/report";
import type { ScalePair } from "./lib/scale-pair";
import type { SeedAnswer, SeedRequest } from "./lib/seed-child";
import type { OpenDocsAnswer, OpenDocsRequest } from "./lib/sync-clients-child";

/** RSS per open note the issue asks for, in KiB. */
const TARGET_KIB = 20;
const OPEN_TIMEOUT_MS = 300_000;

async function waitForDocuments(server: RunningServer, wanted: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let count = server.context.sync.hocuspocus.getDocumentsCount();
  while (count !== wanted && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    count = server.context.sync.hocuspocus.getDocumentsCount();
  }
  return count;
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** `"20-150,50-400"` → word ranges. */
function noteSizes(): { minWords: number; maxWords: number }[] {
  const raw = stringFromEnv("BENCH_SCALE_NOTE_WORDS", "20-150,50-400");
  return raw.split(",").map((range) => {
    const [min, max] = range.split("-").map(Number);
    if (!Number.isInteger(min) || !Number.isInteger(max) || (min ?? 0) <= 0 || (max ?? 0) < (min ?? 0)) {
      throw new Error(`BENCH_SCALE_NOTE_WORDS must be ranges like "20-150,50-400", got "${raw}"`);
    }
    return { minWords: min as number, maxWords: max as number };
  });
}

/** A reading after a full GC, then one after the memory-reducing GC. */
interface Readings {
  readonly full: MemoryReading;
  readonly reduced: MemoryReading;
}

async function readings(): Promise<Readings> {
  const full = await settledMemory();
  const reduced = await settledMemory({ reduce: true });
  return { full, reduced };
}

interface PerNote {
  /** RSS after a full GC, after the reducing GC, and heap used (after the reducing GC). */
  readonly rss: number;
  readonly rssReduced: number;
  readonly heap: number;
  /** Heap V8 holds (used and free) and memory outside the heap (buffers), both after the reducing GC. */
  readonly heapTotal: number;
  readonly external: number;
}

function perNote(after: Readings, before: Readings, notes: number): PerNote {
  return {
    rss: (after.full.rss - before.full.rss) / notes,
    rssReduced: (after.reduced.rss - before.reduced.rss) / notes,
    heap: (after.reduced.heapUsed - before.reduced.heapUsed) / notes,
    heapTotal: (after.reduced.heapTotal - before.reduced.heapTotal) / notes,
    external: (after.reduced.external - before.reduced.external) / notes,
  };
}

interface SizeResult {
  readonly label: string;
  readonly server: PerNote;
  readonly floor: PerNote;
  readonly left: number;
  /** Per note, what stays once they have all closed (against none open before), after the reducing GC. */
  readonly keptRss: number;
  readonly keptHeap: number;
}

async function measureSize(
  pair: ScalePair,
  index: number,
  size: { minWords: number; maxWords: number },
  notes: number,
  docsPerSocket: number,
  snapshots: string | undefined,
): Promise<SizeResult> {
  const { one } = pair;
  const seeder = await startChild(new URL("./lib/seed-child.ts", import.meta.url));
  let seeded: SeedAnswer;
  try {
    seeded = await seeder.call<SeedAnswer>("seed", {
      dataDir: "",
      databaseUrl: pair.databaseUrl,
      username: `erin${index}`,
      options: { ...DEFAULT_SEED_OPTIONS, ...size, notes, folders: 10 },
    } satisfies SeedRequest);
  } finally {
    await seeder.close();
  }
  const { apiKey } = await createApiKey(one.context.db, { userId: seeded.userId, scopes: ALL_SCOPES, label: "benchmark" });
  const uuids = (
    await one.context.db.selectFrom("notes").select("uuid").where("owner_id", "=", seeded.userId).orderBy("uuid").limit(notes).execute()
  ).map((row) => row.uuid);
  const names = uuids.map(noteDocName);

  // The floor first: the same notes as plain Y.Docs loaded from the store, in this process.
  const label = `${size.minWords}–${size.maxWords} words`;
  const snapshotFile = (what: string) => path.join(snapshots ?? "", `scale-${size.minWords}-${size.maxWords}-${what}.heapsnapshot`);
  // Loaded once unmeasured first, so the code it compiles and the pool's connections are not counted.
  for (const doc of await Promise.all(names.map((name) => one.context.sync.store.loadDoc(name)))) doc.destroy();
  const beforeDocs = await readings();
  if (snapshots) writeHeapSnapshot(snapshotFile("no-plain"));
  const plain = await Promise.all(names.map((name) => one.context.sync.store.loadDoc(name)));
  const withDocs = await readings();
  if (snapshots) writeHeapSnapshot(snapshotFile("plain"));
  for (const doc of plain) doc.destroy();
  plain.length = 0;

  const clients = await startChild(new URL("./lib/sync-clients-child.ts", import.meta.url));
  let idle: Readings;
  let open: Readings;
  let answer: OpenDocsAnswer;
  let documentsOpen: number;
  try {
    idle = await readings();
    if (snapshots) writeHeapSnapshot(snapshotFile("none-open"));
    answer = await clients.call<OpenDocsAnswer>("open", {
      url: one.syncUrl,
      token: apiKey,
      names,
      docsPerSocket,
      timeoutMs: OPEN_TIMEOUT_MS,
    } satisfies OpenDocsRequest);
    if (answer.synced !== names.length)
      throw new Error(`only ${answer.synced} of ${names.length} notes synced (${answer.refused} refused)`);
    documentsOpen = one.context.sync.hocuspocus.getDocumentsCount();
    open = await readings();
    if (snapshots) writeHeapSnapshot(snapshotFile("open"));
    await clients.call("close");
  } finally {
    await clients.close();
  }
  const left = await waitForDocuments(one, 0, 30_000);
  const closed = await readings();
  console.log(
    `${label}: ${notes} notes, ${(seeded.result.documentBytes / notes / 1024).toFixed(1)} KiB of Yjs state each on average, opened at once over sync on instance 1 by providers in a child process, ${answer.sockets} connections; synced in ${formatMs(answer.ms)} ms; ${documentsOpen} documents open`,
  );
  if (snapshots) {
    // Snapshots grow this process's RSS: with them on, read the heap figures only.
    const server = await heapDiff(snapshotFile("none-open"), snapshotFile("open"));
    const floor = await heapDiff(snapshotFile("no-plain"), snapshotFile("plain"));
    console.log(`new objects with ${label} open, per note (heap snapshots in ${snapshots}):`);
    console.log(formatHeapDiff(server, notes));
    console.log(`the same, less those of the plain Y.Docs (what the server adds to a note), per note:`);
    console.log(formatHeapDiff(subtractGroups(server, floor), notes));
  }
  const kept = perNote(closed, idle, notes);
  return {
    label,
    server: perNote(open, idle, notes),
    floor: perNote(withDocs, beforeDocs, notes),
    left,
    keptRss: kept.rssReduced,
    keptHeap: kept.heap,
  };
}

export async function openNotesMemory(pair: ScalePair): Promise<void> {
  // V8 drops the bytecode of functions not run for a while at its collections, the start-up's included:
  // the many collections of these readings would count that as memory the notes gave back.
  setFlagsFromString("--no-flush-bytecode");
  const notes = positiveIntFromEnv("BENCH_SCALE_OPEN_NOTES", 1000);
  const docsPerSocket = positiveIntFromEnv("BENCH_SCALE_DOCS_PER_SOCKET", 50);
  const snapshots = process.env.BENCH_SCALE_HEAP_SNAPSHOTS?.trim() || undefined;
  if (snapshots) await mkdir(snapshots, { recursive: true });
  console.log("\nopen notes:");
  const results: SizeResult[] = [];
  for (const [index, size] of noteSizes().entries()) results.push(await measureSize(pair, index, size, notes, docsPerSocket, snapshots));

  const verdict = (bytes: number) => `${bytes <= TARGET_KIB * 1024 ? "PASS" : "BELOW"}`;
  const rows: string[][] = [];
  for (const { label, server, floor } of results) {
    const row = (what: string, n: PerNote) => [`${label}: ${what}`, kib(n.rssReduced), kib(n.heap), kib(n.heapTotal), kib(n.external)];
    rows.push([...row("open on instance 1", server), `≤ ${TARGET_KIB} KiB ${verdict(server.rssReduced)}`]);
    rows.push([...row("plain Y.Docs (floor)", floor), "-"]);
    rows.push([
      `${label}: beyond the Y.Doc`,
      kib(server.rssReduced - floor.rssReduced),
      kib(server.heap - floor.heap),
      kib(server.heapTotal - floor.heapTotal),
      kib(server.external - floor.external),
      "-",
    ]);
  }
  console.log(
    formatTable(["per open note, this process, after the reducing GC", "rss", "heap used", "heap held", "external", "target rss"], rows),
  );
  for (const { label, server } of results) {
    console.log(
      `${label}: after a plain full GC (the heap pages the burst of opening grew still held), rss per open note ${kib(server.rss)}`,
    );
  }
  for (const { label, left, keptRss, keptHeap } of results) {
    console.log(
      `${label}: ${left} documents still open 30 s after the clients left; then, per note against none open before: rss ${kib(keptRss)}, heap ${kib(keptHeap)} (reducing GC)`,
    );
  }
  console.log("");
}
