/**
 * `npm run bench -- scale`, documents open at once on one instance: `BENCH_SCALE_OPEN_NOTES` notes
 * (seeded in a child process straight into the PostgreSQL schema) opened at once over sync on
 * instance 1 by providers in a child process (their own copies are not counted here), and this
 * process's RSS and heap after a full GC before and while they are open: what one open note costs
 * an instance with PostgreSQL and Redis. The same-run baseline: the same notes loaded from the
 * store as plain `Y.Doc`s in this process, the floor of any server that holds them in memory.
 */
import { ALL_SCOPES, noteDocName } from "@tandem/core";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import type { RunningServer } from "../apps/server/src/server";
import { startChild } from "./lib/child";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs } from "./lib/latency";
import { formatDeltaMiB, formatMiB, type MemoryReading, settledMemory } from "./lib/memory";
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

export async function openNotesMemory(pair: ScalePair): Promise<void> {
  const notes = positiveIntFromEnv("BENCH_SCALE_OPEN_NOTES", 1000);
  const docsPerSocket = positiveIntFromEnv("BENCH_SCALE_DOCS_PER_SOCKET", 50);
  const { one } = pair;

  const seeder = await startChild(new URL("./lib/seed-child.ts", import.meta.url));
  let seeded: SeedAnswer;
  try {
    seeded = await seeder.call<SeedAnswer>("seed", {
      dataDir: "",
      databaseUrl: pair.databaseUrl,
      username: "erin",
      options: { ...DEFAULT_SEED_OPTIONS, notes, folders: 10 },
    } satisfies SeedRequest);
  } finally {
    await seeder.close();
  }
  const { apiKey } = await createApiKey(one.context.db, { userId: seeded.userId, scopes: ALL_SCOPES, label: "benchmark" });
  const uuids = (
    await one.context.db.selectFrom("notes").select("uuid").where("owner_id", "=", seeded.userId).orderBy("uuid").limit(notes).execute()
  ).map((row) => row.uuid);
  const names = uuids.map(noteDocName);

  // The baseline first: the same notes as plain Y.Docs loaded from the store, in this process.
  const beforeDocs = await settledMemory();
  const plain = await Promise.all(names.map((name) => one.context.sync.store.loadDoc(name)));
  const withDocs = await settledMemory();
  for (const doc of plain) doc.destroy();
  plain.length = 0;

  const clients = await startChild(new URL("./lib/sync-clients-child.ts", import.meta.url));
  let idle: MemoryReading;
  let open: MemoryReading;
  let answer: OpenDocsAnswer;
  let documentsOpen: number;
  try {
    idle = await settledMemory();
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
    open = await settledMemory();
    await clients.call("close");
  } finally {
    await clients.close();
  }
  const left = await waitForDocuments(one, 0, 30_000);

  const perNote = (after: MemoryReading, before: MemoryReading) => ({
    rss: (after.rss - before.rss) / notes,
    heap: (after.heapUsed - before.heapUsed) / notes,
    external: (after.external - before.external) / notes,
  });
  const server = perNote(open, idle);
  const floor = perNote(withDocs, beforeDocs);
  console.log(
    `\nopen notes: ${notes} notes (${seeded.result.minWords}–${seeded.result.maxWords} words, ${(seeded.result.documentBytes / notes / 1024).toFixed(1)} KiB of Yjs state each on average) opened at once over sync on instance 1 by providers in a child process, ${answer.sockets} connections; synced in ${formatMs(answer.ms)} ms; ${documentsOpen} documents open`,
  );
  console.log(
    formatTable(
      ["this process, after a full GC", "rss", "Δ rss", "heap used", "Δ heap", "per note: rss", "heap", "external", "target rss"],
      [
        [
          `${notes} notes open on instance 1 (Δ against none open)`,
          formatMiB(open.rss),
          formatDeltaMiB(open.rss - idle.rss),
          formatMiB(open.heapUsed),
          formatDeltaMiB(open.heapUsed - idle.heapUsed),
          kib(server.rss),
          kib(server.heap),
          kib(server.external),
          `≤ ${TARGET_KIB} KiB ${server.rss <= TARGET_KIB * 1024 ? "PASS" : "BELOW"}`,
        ],
        [
          `the same notes as plain Y.Docs (baseline)`,
          formatMiB(withDocs.rss),
          formatDeltaMiB(withDocs.rss - beforeDocs.rss),
          formatMiB(withDocs.heapUsed),
          formatDeltaMiB(withDocs.heapUsed - beforeDocs.heapUsed),
          kib(floor.rss),
          kib(floor.heap),
          kib(floor.external),
          "-",
        ],
      ],
    ),
  );
  console.log(
    `an open note costs ${kib(server.heap - floor.heap)} of heap beyond its Y.Doc; ${left} documents still open 30 s after the clients left\n`,
  );
}
