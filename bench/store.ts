/**
 * `npm run bench -- store`: what a document store costs now that it never overwrites another
 * process's store (docs/scaling.md, "Never lose a write"), against the two other ways to get
 * there, on SQLite and (with BENCH_DATABASE_URL=postgres://…) on PostgreSQL, in the same run:
 *   (a) overwrite: the upsert of the whole state that stores did before (the baseline; it loses writes);
 *   (b) merging store, sole writer: `DocumentStore.save` when nobody else stored since (the usual case:
 *       one conditional update);
 *   (c) merging store, contended: another connection stored before every store, so each one reads
 *       the stored state, applies it and writes the union;
 *   (d) append-only log: each store inserts what changed since the last one; loading then reads the
 *       base and every update not yet compacted, and compacting merges them into the base.
 * Each sample is one small edit to a note of BENCH_STORE_WORDS words, then one store.
 */
import { markdownToJson, NOTE_FRAGMENT, writeNoteBody } from "@tandem/core";
import { type Generated, type Kysely, sql } from "kysely";
import pg from "pg";
import * as Y from "yjs";
import { openDatabase } from "../apps/server/src/db/database";
import type { Schema } from "../apps/server/src/db/schema";
import { DocumentStore } from "../apps/server/src/sync/document-store";
import { describeLoad, positiveIntFromEnv, stringFromEnv } from "./lib/env";
import { formatMs, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { body, Prng } from "./lib/text-gen";

interface Storage {
  readonly label: string;
  /** Two handles on one database, as two processes would have. */
  readonly mine: Kysely<Schema>;
  readonly theirs: Kysely<Schema>;
  close(): Promise<void>;
}

/** The log of strategy (d): not part of Tandem's schema, created for the run. */
interface LogSchema {
  document_updates: { id: Generated<number>; name: string; update: Uint8Array };
}

async function openSqlite(): Promise<Storage> {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const path = await import("node:path");
  const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-bench-store-"));
  const a = await openDatabase({ dataDir });
  const b = await openDatabase({ dataDir });
  return {
    label: "SQLite",
    mine: a.db,
    theirs: b.db,
    close: async () => {
      await a.close();
      await b.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function openPostgres(baseUrl: string): Promise<Storage> {
  const schema = `bench_store_${process.pid}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const url = new URL(baseUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const a = await openDatabase({ dataDir: "", databaseUrl: url.toString() });
  const b = await openDatabase({ dataDir: "", databaseUrl: url.toString() });
  return {
    label: "PostgreSQL",
    mine: a.db,
    theirs: b.db,
    close: async () => {
      await a.close();
      await b.close();
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

function seedDoc(words: number): Y.Doc {
  const doc = new Y.Doc();
  writeNoteBody(doc, markdownToJson(body(new Prng(7), words).markdown));
  return doc;
}

/** One small edit: a few characters typed into the first paragraph, as an editor sends them. */
function type(doc: Y.Doc, i: number): void {
  const fragment = doc.getXmlFragment(NOTE_FRAGMENT);
  const first = fragment.get(0);
  const text = first instanceof Y.XmlElement ? first.get(0) : undefined;
  if (text instanceof Y.XmlText) text.insert(0, `e${i} `);
  else fragment.insert(0, [new Y.XmlText(`e${i} `)]);
}

/** Today's overwrite as it was: the whole state, upserted. */
async function overwrite(db: Kysely<Schema>, name: string, doc: Y.Doc): Promise<void> {
  const state = Y.encodeStateAsUpdate(doc);
  const updatedAt = new Date().toISOString();
  await db
    .insertInto("documents")
    .values({ name, state, updated_at: updatedAt })
    .onConflict((oc) => oc.column("name").doUpdateSet({ state, updated_at: updatedAt, version: sql`documents.version + 1` }))
    .execute();
}

interface Contestant {
  readonly name: string;
  readonly note: string;
  /** Unmeasured work before each sample (another process's store). */
  before?(i: number): Promise<void>;
  step(i: number): Promise<void>;
}

/**
 * Samples every contestant in turn, one store each per round, so a burst of load from elsewhere on
 * a shared machine hits them all alike instead of whichever happened to run then.
 */
async function measureInRounds(contestants: readonly Contestant[], rounds: number, warmup: number) {
  const samples = contestants.map(() => [] as number[]);
  for (let i = 0; i < warmup + rounds; i++) {
    for (const [index, contestant] of contestants.entries()) {
      await contestant.before?.(i);
      const started = performance.now();
      await contestant.step(i);
      if (i >= warmup) samples[index]?.push(performance.now() - started);
    }
  }
  return contestants.map((contestant, index) => ({ name: contestant.name, note: contestant.note, stats: summarize(samples[index] ?? []) }));
}

async function runOn(storage: Storage, settings: { stores: number; warmup: number; words: number; logDepth: number }) {
  const { mine, theirs } = storage;
  const seed = Y.encodeStateAsUpdate(seedDoc(settings.words));
  const fresh = () => {
    const doc = new Y.Doc();
    Y.applyUpdate(doc, seed);
    return doc;
  };
  const log = mine as unknown as Kysely<LogSchema>;
  const binary = storage.label === "SQLite" ? "blob" : "bytea";
  await log.schema
    .createTable("document_updates")
    .addColumn("id", "integer", (c) =>
      storage.label === "SQLite" ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity(),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("update", binary, (c) => c.notNull())
    .execute();
  await overwrite(mine, "note:log", fresh());

  const store = new DocumentStore(mine);
  const other = new DocumentStore(theirs);
  const [overwritten, sole, contended, rival, logged] = [fresh(), fresh(), fresh(), fresh(), fresh()];
  let storedVector = Y.encodeStateVector(logged);
  const stores: Contestant[] = [
    {
      name: "(a) overwrite (before; loses writes)",
      note: `${seed.length} B state`,
      step: async (i) => {
        type(overwritten, i);
        await overwrite(mine, "note:overwrite", overwritten);
      },
    },
    {
      name: "(b) merging store, sole writer",
      note: "one UPDATE … WHERE version = the one it holds",
      step: async (i) => {
        type(sole, i);
        await store.save("note:sole", sole);
      },
    },
    {
      name: "(c) merging store, contended (row lock)",
      note: "another store before each: read, apply, write",
      before: async (i) => {
        type(rival, i + 1_000_000);
        await other.save("note:contended", rival);
      },
      step: async (i) => {
        type(contended, i);
        await store.save("note:contended", contended);
      },
    },
    {
      name: "(d) append-only log: store",
      note: "insert of the diff since the last store",
      step: async (i) => {
        type(logged, i);
        const update = Y.encodeStateAsUpdate(logged, storedVector);
        await log.insertInto("document_updates").values({ name: "note:log", update }).execute();
        storedVector = Y.encodeStateVector(logged);
      },
    },
  ];
  const rows = await measureInRounds(stores, settings.stores, settings.warmup);

  // Loading: one row (a, b, c) against a base and the updates not yet compacted (d).
  const readLog = (db: Kysely<LogSchema>) =>
    db
      .selectFrom("document_updates")
      .select(["id", "update"])
      .where("name", "=", "note:log")
      .orderBy("id")
      .limit(settings.logDepth)
      .execute();
  const loads: Contestant[] = [
    {
      name: "load: one merged row",
      note: "(b), (c)",
      step: async () => {
        const row = await mine.selectFrom("documents").select("state").where("name", "=", "note:sole").executeTakeFirstOrThrow();
        Y.applyUpdate(new Y.Doc(), new Uint8Array(row.state));
      },
    },
    {
      name: `load: base + ${settings.logDepth} logged updates`,
      note: "(d) between compactions",
      step: async () => {
        const doc = new Y.Doc();
        const base = await mine.selectFrom("documents").select("state").where("name", "=", "note:log").executeTakeFirstOrThrow();
        const updates = await readLog(log);
        Y.applyUpdate(doc, new Uint8Array(base.state));
        for (const { update } of updates) Y.applyUpdate(doc, new Uint8Array(update));
      },
    },
    {
      name: `(d) compaction of ${settings.logDepth} updates`,
      note: "lock base, merge, write (the log is kept, so each round does the same)",
      step: async () => {
        await mine.transaction().execute(async (trx) => {
          const base = await trx
            .selectFrom("documents")
            .select("state")
            .where("name", "=", "note:log")
            .forUpdate()
            .executeTakeFirstOrThrow();
          const updates = await readLog(trx as unknown as Kysely<LogSchema>);
          const merged = Y.mergeUpdates([new Uint8Array(base.state), ...updates.map((u) => new Uint8Array(u.update))]);
          await trx.updateTable("documents").set({ state: merged }).where("name", "=", "note:log").execute();
        });
      },
    },
  ];
  rows.push(...(await measureInRounds(loads, Math.max(10, Math.floor(settings.stores / 3)), 5)));
  return rows;
}

export async function run(): Promise<void> {
  const settings = {
    stores: positiveIntFromEnv("BENCH_STORE_COUNT", 300),
    warmup: positiveIntFromEnv("BENCH_STORE_WARMUP", 30),
    words: positiveIntFromEnv("BENCH_STORE_WORDS", 2000),
    logDepth: positiveIntFromEnv("BENCH_STORE_LOG_DEPTH", 100),
  };
  const postgresUrl = stringFromEnv("BENCH_DATABASE_URL", "");
  process.stdout.write(`${describeMachine()}\n${describeLoad()}\n`);
  process.stdout.write(`stores: ${settings.stores} (+${settings.warmup} warm-up), note of ${settings.words} words\n\n`);
  for (const open of [openSqlite, ...(postgresUrl ? [() => openPostgres(postgresUrl)] : [])]) {
    const storage = await open();
    try {
      const rows = await runOn(storage, settings);
      process.stdout.write(`${storage.label}\n`);
      process.stdout.write(
        `${formatTable(
          ["", "p50 ms", "p99 ms", "mean ms", ""],
          rows.map(({ name, stats, note }) => [name, formatMs(stats.p50Ms), formatMs(stats.p99Ms), formatMs(stats.meanMs), note]),
        )}\n\n`,
      );
    } finally {
      await storage.close();
    }
  }
  if (!postgresUrl) process.stdout.write("PostgreSQL skipped: set BENCH_DATABASE_URL=postgres://… to include it.\n");
}
