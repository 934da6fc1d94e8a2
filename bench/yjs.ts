/**
 * `npm run bench -- yjs`: an edit from a y-websocket client (Tandem's `/yjs`) seen by a Hocuspocus
 * client, beside the same edit between two Hocuspocus clients, on one Tandem server in the same run.
 * Three clients open one note: Hocuspocus providers A and B on `/sync`, and a y-websocket
 * WebsocketProvider Y on `/yjs`. One sample: A (or Y) types one character, and the time until B's
 * document has it; the next edit starts only then. Both paths run in alternating rounds, with all
 * three clients connected throughout, so each edit reaches the same clients.
 */
import * as Y from "yjs";
import { describeLoad, positiveIntFromEnv } from "./lib/env";
import { formatMs, type LatencyStats, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { connectYWebsocket, sameBody } from "./lib/sync-targets";
import { body, Prng } from "./lib/text-gen";
import { checkTandemPersisted, runEdits, startTandemTarget, type Target } from "./sync";

/** y-websocket → Hocuspocus must be within this factor of Hocuspocus → Hocuspocus at p50. */
const TARGET_RATIO = 1.2;

export async function run(): Promise<void> {
  const edits = positiveIntFromEnv("BENCH_YJS_EDITS", 500);
  const warmup = positiveIntFromEnv("BENCH_YJS_WARMUP", 50);
  const rounds = positiveIntFromEnv("BENCH_YJS_ROUNDS", 20);
  const perRound = Math.floor(edits / rounds);
  if (perRound === 0) throw new Error("BENCH_YJS_EDITS must be at least BENCH_YJS_ROUNDS");
  const generated = body(new Prng(7), positiveIntFromEnv("BENCH_YJS_NOTE_WORDS", 300));
  const markdown = `Sync benchmark note: A or Y types here and B watches.\n\n${generated.markdown}`;

  process.stdout.write(`${describeMachine()}\n${describeLoad()}\n`);
  const ours = await startTandemTarget(markdown);
  const token = (ours.tandem.authHeaders.authorization ?? "").replace(/^Bearer /, "");
  let y: Awaited<ReturnType<typeof connectYWebsocket>> | undefined;
  try {
    y = await connectYWebsocket(ours.tandem.server.yjsUrl, ours.name, token);
    if (!sameBody(y.doc, ours.b.doc)) throw new Error("the y-websocket client does not see the note's body");
    const targets: Target[] = [
      { name: "Hocuspocus A → Hocuspocus B (/sync → /sync)", a: ours.a, b: ours.b, samples: [], busyMs: 0 },
      { name: "y-websocket Y → Hocuspocus B (/yjs → /sync)", a: y, b: ours.b, samples: [], busyMs: 0 },
    ];
    process.stdout.write(
      `workload: one note of ${generated.words + 11} words (${Y.encodeStateAsUpdate(ours.a.doc).byteLength} bytes of Yjs state), ` +
        "three clients on separate connections to one Tandem server (SQLite), one character per edit, sequential\n" +
        `settings: ${warmup} warm-up edits per path, then ${perRound * rounds} measured in ${rounds} alternating rounds of ${perRound}; ` +
        "everything in this process on loopback\n\nwarming up…\n",
    );
    for (const target of targets) await runEdits(target, warmup, false);
    process.stdout.write(`measuring ${rounds} rounds of ${perRound} edits per path…\n`);
    for (let round = 1; round <= rounds; round++) {
      for (const target of targets) await runEdits(target, perRound, true);
    }
    if (!sameBody(ours.a.doc, ours.b.doc) || !sameBody(y.doc, ours.b.doc)) throw new Error("the clients diverged");
    await checkTandemPersisted(ours);

    const [hocuspocus, yjs] = targets.map((target) => summarize(target.samples)) as [LatencyStats, LatencyStats];
    const header = ["path (edit → seen by B)", "n", "min", "p50", "p90", "p99", "max", "mean", "busy/edit"];
    const rows = targets.map((target, i) => {
      const s = [hocuspocus, yjs][i] as LatencyStats;
      return [
        target.name,
        String(s.count),
        ...[s.minMs, s.p50Ms, s.p90Ms, s.p99Ms, s.maxMs, s.meanMs].map(formatMs),
        formatMs(target.busyMs / Math.max(1, target.samples.length)),
      ];
    });
    const ratio = yjs.p50Ms / hocuspocus.p50Ms;
    process.stdout.write(
      [
        "",
        formatTable(header, rows),
        "all times in ms; busy/edit: this process's main-thread busy time per edit (clients and server share it)",
        "",
        `y-websocket/Hocuspocus: p50 ${ratio.toFixed(2)}×, p99 ${(yjs.p99Ms / hocuspocus.p99Ms).toFixed(2)}×`,
        `target: y-websocket → Hocuspocus ≤ ${TARGET_RATIO}× Hocuspocus → Hocuspocus at p50  ${ratio <= TARGET_RATIO ? "PASS" : "BELOW"}`,
        "",
      ].join("\n"),
    );
    if (targets.some((target) => target.samples.length !== perRound * rounds)) process.exitCode = 1;
  } finally {
    // Clients first, then the server: its close stores the documents still open.
    y?.close();
    ours.a.close();
    ours.b.close();
    await ours.tandem.close();
  }
}
