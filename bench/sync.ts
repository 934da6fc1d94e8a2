/**
 * `npm run bench -- sync`: how long one small edit takes to travel from one client to another
 * through the sync hub. Two clients (A and B) open the same note; A types one character, and the
 * time until B's document has it is one sample; the next edit starts only then. Measured, in the
 * same run and in alternating rounds, against:
 *   (a) the real Tandem server (API key as token, a note the user owns, storage and views on);
 *   (b) stock Hocuspocus with no extensions on the same kind of `ws` server;
 *   (c) a raw `ws` relay forwarding raw Yjs updates (the transport's floor).
 */
import { markdownToJson, writeNoteBody } from "@tandem/core";
import type { JSONContent } from "@tiptap/core";
import * as Y from "yjs";
import { describeLoad, positiveIntFromEnv } from "./lib/env";
import { formatMs, type LatencyStats, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import {
  connectProvider,
  connectRawClient,
  firstText,
  type SyncClient,
  type SyncServerHandle,
  sameBody,
  startRawRelay,
  startStockHocuspocus,
} from "./lib/sync-targets";
import { type BenchTandem, startBenchTandem } from "./lib/tandem";
import { body, Prng } from "./lib/text-gen";

/** Ours must be within this factor of stock Hocuspocus at p50. */
const TARGET_RATIO = 1.25;
/** How long B may take to see one edit before the run is declared broken. */
const EDIT_TIMEOUT_MS = 10_000;

interface SyncSettings {
  readonly edits: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly noteWords: number;
}

function settingsFromEnv(): SyncSettings {
  return {
    edits: positiveIntFromEnv("BENCH_SYNC_EDITS", 500),
    warmup: positiveIntFromEnv("BENCH_SYNC_WARMUP", 50),
    rounds: positiveIntFromEnv("BENCH_SYNC_ROUNDS", 20),
    noteWords: positiveIntFromEnv("BENCH_SYNC_NOTE_WORDS", 300),
  };
}

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface Target {
  readonly name: string;
  readonly a: SyncClient;
  readonly b: SyncClient;
  readonly samples: number[];
  /** Main-thread busy time during the measured edits, ms: client and server work together. */
  busyMs: number;
}

/** One edit: A inserts a character mid-paragraph; resolves with the ms until B's document changes. */
async function oneEdit(target: Target, position: number): Promise<number> {
  const text = firstText(target.a.doc);
  if (!text) throw new Error(`${target.name}: the note has no text to edit`);
  const observed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      target.b.doc.off("update", onUpdate);
      reject(new Error(`${target.name}: B did not see an edit within ${EDIT_TIMEOUT_MS} ms`));
    }, EDIT_TIMEOUT_MS);
    const onUpdate = () => {
      clearTimeout(timer);
      target.b.doc.off("update", onUpdate);
      resolve();
    };
    target.b.doc.on("update", onUpdate);
  });
  const started = performance.now();
  text.insert(Math.min(position, text.length), "x");
  await observed;
  return performance.now() - started;
}

export async function runEdits(target: Target, count: number, record: boolean): Promise<void> {
  const before = performance.eventLoopUtilization();
  for (let i = 0; i < count; i++) {
    const ms = await oneEdit(target, 40 + (i % 20));
    if (record) target.samples.push(ms);
  }
  if (record) target.busyMs += performance.eventLoopUtilization(before).active;
}

export interface TandemTarget {
  readonly tandem: BenchTandem;
  readonly name: string;
  readonly uuid: string;
  readonly a: SyncClient;
  readonly b: SyncClient;
}

/**
 * After the run: Tandem must have stored the edited note and updated its text view (after their
 * debounces), or (a) did not do the work it claims to. Polls for up to a few seconds.
 */
export async function checkTandemPersisted(target: TandemTarget): Promise<void> {
  const { context } = target.tandem.server;
  const expectedText = firstText(target.a.doc)?.toString() ?? "";
  const deadline = Date.now() + 5_000;
  for (;;) {
    const stored = await context.sync.store.loadDoc(target.name);
    const view = await context.db.selectFrom("note_bodies").select("text").where("uuid", "=", target.uuid).executeTakeFirst();
    const storedOk = sameBody(stored, target.a.doc);
    stored.destroy();
    if (storedOk && view?.text.includes(expectedText)) return;
    if (Date.now() > deadline) {
      throw new Error(`tandem: ${storedOk ? "the note's text view" : "the stored note"} does not show the edits 5 s after the run`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function startTandemTarget(content: string): Promise<TandemTarget> {
  const tandem = await startBenchTandem();
  const clients: SyncClient[] = [];
  try {
    const response = await fetch(`${tandem.server.apiUrl}/os/notes`, {
      method: "POST",
      headers: { ...tandem.authHeaders, "content-type": "application/json" },
      body: JSON.stringify({ title: "Sync benchmark", content, format: "markdown" }),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`creating the note answered ${response.status}: ${text.slice(0, 300)}`);
    const { result } = JSON.parse(text) as { result: { note: { uuid: string } } };
    const token = (tandem.authHeaders.authorization ?? "").replace(/^Bearer /, "");
    const name = `note:${result.note.uuid}`;
    const a = await connectProvider(tandem.server.syncUrl, name, token);
    clients.push(a);
    const b = await connectProvider(tandem.server.syncUrl, name, token);
    clients.push(b);
    if (!firstText(a.doc) || !sameBody(a.doc, b.doc)) throw new Error("tandem: the clients do not see the note's body");
    return { tandem, name, uuid: result.note.uuid, a, b };
  } catch (error) {
    for (const client of clients) client.close();
    await tandem.close();
    throw error;
  }
}

/** Connects A and B to a server, lets A write the body, closing what was opened (server included) if anything fails. */
async function connectPair(
  server: SyncServerHandle,
  connect: () => Promise<SyncClient>,
  prepare: (a: SyncClient) => void,
  label: string,
): Promise<{ server: SyncServerHandle; a: SyncClient; b: SyncClient }> {
  const clients: SyncClient[] = [];
  try {
    const a = await connect();
    clients.push(a);
    const b = await connect();
    clients.push(b);
    // After both are connected: the raw relay forwards live messages only, it keeps no state.
    prepare(a);
    await waitUntil(() => sameBody(a.doc, b.doc), `${label}: B to receive the body`);
    return { server, a, b };
  } catch (error) {
    for (const client of clients) client.close();
    await server.close();
    throw error;
  }
}

async function startStockTarget(json: JSONContent): Promise<{ server: SyncServerHandle; a: SyncClient; b: SyncClient }> {
  const server = await startStockHocuspocus();
  const name = "note:00000000-0000-4000-8000-000000000001";
  return connectPair(
    server,
    () => connectProvider(server.url, name, "stock"),
    (a) => writeNoteBody(a.doc, json),
    "stock",
  );
}

async function startRawTarget(json: JSONContent): Promise<{ server: SyncServerHandle; a: SyncClient; b: SyncClient }> {
  const server = await startRawRelay();
  return connectPair(
    server,
    () => connectRawClient(server.url),
    (a) => writeNoteBody(a.doc, json),
    "raw",
  );
}

function report(targets: readonly Target[], settings: SyncSettings): boolean {
  const stats = new Map<string, LatencyStats>(targets.map((t) => [t.name, summarize(t.samples)]));
  const header = ["target (edit on A → seen by B)", "n", "min", "p50", "p90", "p99", "max", "mean", "busy/edit"];
  const rows = targets.map((target) => {
    const s = stats.get(target.name) as LatencyStats;
    return [
      target.name,
      String(s.count),
      formatMs(s.minMs),
      formatMs(s.p50Ms),
      formatMs(s.p90Ms),
      formatMs(s.p99Ms),
      formatMs(s.maxMs),
      formatMs(s.meanMs),
      formatMs(target.busyMs / Math.max(1, target.samples.length)),
    ];
  });
  const [ours, stock, raw] = targets.map((t) => stats.get(t.name) as LatencyStats);
  if (!ours || !stock || !raw) throw new Error("missing a target");
  const ratio = ours.p50Ms / stock.p50Ms;
  const verdict = ratio <= TARGET_RATIO ? "PASS" : "BELOW";
  process.stdout.write(
    [
      "",
      formatTable(header, rows),
      "all times in ms; busy/edit: this process's main-thread busy time per edit (clients and server share it)",
      "",
      `ours/stock: p50 ${ratio.toFixed(2)}×, p99 ${(ours.p99Ms / stock.p99Ms).toFixed(2)}×; ` +
        `stock/raw: p50 ${(stock.p50Ms / raw.p50Ms).toFixed(2)}×; ours − stock at p50: ${formatMs(ours.p50Ms - stock.p50Ms)} ms`,
      `target: ours ≤ ${TARGET_RATIO}× stock Hocuspocus at p50  ${verdict}`,
      "",
    ].join("\n"),
  );
  return targets.every((t) => t.samples.length === Math.floor(settings.edits / settings.rounds) * settings.rounds);
}

export async function run(): Promise<void> {
  const settings = settingsFromEnv();
  const generated = body(new Prng(7), settings.noteWords);
  // The note starts with a paragraph, so the first text node is ordinary paragraph text.
  const markdown = `Sync benchmark note: A types here and B watches.\n\n${generated.markdown}`;
  const json = markdownToJson(markdown);
  const perRound = Math.floor(settings.edits / settings.rounds);
  if (perRound === 0) throw new Error("BENCH_SYNC_EDITS must be at least BENCH_SYNC_ROUNDS");

  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    process.stdout.write(`${describeMachine()}\n${describeLoad()}\n`);
    const ours = await startTandemTarget(markdown);
    cleanups.push(
      () => ours.tandem.close(),
      () => ours.a.close(),
      () => ours.b.close(),
    );
    const stock = await startStockTarget(json);
    cleanups.push(
      () => stock.server.close(),
      () => stock.a.close(),
      () => stock.b.close(),
    );
    const raw = await startRawTarget(json);
    cleanups.push(
      () => raw.server.close(),
      () => raw.a.close(),
      () => raw.b.close(),
    );

    const targets: Target[] = [
      { name: "(a) tandem server (auth, storage, views)", a: ours.a, b: ours.b, samples: [], busyMs: 0 },
      { name: "(b) stock Hocuspocus, no extensions", a: stock.a, b: stock.b, samples: [], busyMs: 0 },
      { name: "(c) raw ws relay, raw Yjs updates", a: raw.a, b: raw.b, samples: [], busyMs: 0 },
    ];
    process.stdout.write(
      `workload: one note of ${generated.words + 9} words (${Y.encodeStateAsUpdate(ours.a.doc).byteLength} bytes of Yjs state), ` +
        "two clients on separate connections, one character per edit, sequential\n" +
        `settings: ${settings.warmup} warm-up edits per target, then ${perRound * settings.rounds} measured in ${settings.rounds} ` +
        `alternating rounds of ${perRound}; everything in this process on loopback\n\n`,
    );
    process.stdout.write("warming up…\n");
    for (const target of targets) await runEdits(target, settings.warmup, false);
    process.stdout.write(`measuring ${settings.rounds} rounds of ${perRound} edits per target…\n`);
    for (let round = 1; round <= settings.rounds; round++) {
      for (const target of targets) await runEdits(target, perRound, true);
    }
    for (const target of targets) {
      if (!sameBody(target.a.doc, target.b.doc)) throw new Error(`${target.name}: A and B diverged`);
    }
    await checkTandemPersisted(ours);
    if (!report(targets, settings)) process.exitCode = 1;
  } finally {
    // Clients first, then servers: Tandem's close stores the documents still open.
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        process.stderr.write(`cleanup: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
  }
}
