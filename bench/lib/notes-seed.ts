/**
 * Seeds a notes workspace fast, without going through the API: builds the `workspace:<userId>`
 * document and one `note:<uuid>` document per note with the same core helpers the server uses
 * (`putFolder`, `putNote`, `markdownToJson`, `writeNoteBody`), stores them with the server's
 * DocumentStore and runs the server's own view materialisers, so the SQL views (lists, search,
 * grep) are exactly what the server would have derived. Note bodies are written in batches, each
 * batch one transaction (one fsync), which is what makes 10,000 notes take seconds, not minutes.
 */
import { randomUUID } from "node:crypto";
import { markdownToJson, noteDocName, putFolder, putNote, workspaceDocName, writeNoteBody } from "@tandem/core";
import type { Kysely } from "kysely";
import * as Y from "yjs";
import type { Schema } from "../../apps/server/src/db/schema";
import { DocumentStore } from "../../apps/server/src/sync/document-store";
import { generalFolderUuid } from "../../apps/server/src/workspace/folders/folders-service";
import { materializeNoteBody } from "../../apps/server/src/workspace/views/note-view";
import { materializeWorkspace } from "../../apps/server/src/workspace/views/workspace-view";
import { body, Prng, title } from "./text-gen";

export interface SeedOptions {
  readonly notes: number;
  /** Folders, General included; a fifth of them are nested under another. */
  readonly folders: number;
  /** PRNG seed: the same seed gives the same workspace (uuids aside). */
  readonly seed: number;
  /** A word that appears nowhere else, placed in `rareShare` of the notes. */
  readonly rareWord: string;
  readonly rareShare: number;
  readonly minWords: number;
  readonly maxWords: number;
  /** Notes written per transaction. */
  readonly batchSize: number;
  /**
   * When set, a root folder of this name holds everything: the other folders are nested in it and
   * the root notes are its notes (`memory-search` seeds the agent's memory, the root folder Memory).
   */
  readonly rootFolder?: string;
}

export const DEFAULT_SEED_OPTIONS: SeedOptions = {
  notes: 10_000,
  folders: 50,
  seed: 20_240_917,
  rareWord: "quokka",
  rareShare: 0.02,
  minWords: 50,
  maxWords: 400,
  batchSize: 500,
};

export interface SeededFolder {
  readonly uuid: string;
  readonly name: string;
  readonly notes: number;
}

export interface SeedResult {
  readonly folders: readonly SeededFolder[];
  readonly notes: number;
  /** Notes at the root, or in the root folder when there is one. */
  readonly rootNotes: number;
  readonly notesWithRareWord: number;
  readonly totalWords: number;
  readonly minWords: number;
  readonly maxWords: number;
  /** Bytes of stored Yjs state, all documents. */
  readonly documentBytes: number;
  /** Generating text and building Yjs documents (CPU only). */
  readonly buildMs: number;
  /** Storing documents and materialising views (SQLite). */
  readonly storeMs: number;
  readonly totalMs: number;
}

const FOLDER_NAMES = [
  "Projects",
  "Meetings",
  "Research",
  "Reading",
  "Journal",
  "Recipes",
  "Travel",
  "Ideas",
  "Archive",
  "Clients",
  "Hiring",
  "Finance",
  "Health",
  "Learning",
  "Design",
  "Engineering",
  "Marketing",
  "Sales",
  "Support",
  "Legal",
  "Home",
  "Garden",
  "Music",
  "Books",
  "Films",
  "Podcasts",
  "Workshops",
  "Conferences",
  "Roadmap",
  "Incidents",
  "Releases",
  "Onboarding",
  "Personal",
  "Family",
  "Writing",
  "Photography",
  "Fitness",
  "Languages",
  "Courses",
  "Side projects",
  "Infrastructure",
  "Security",
  "Data",
  "Partners",
  "Events",
  "Retrospectives",
  "Drafts",
  "Snippets",
  "Inbox",
];

/** Fixed, so two runs produce the same timestamps and orderings. */
const EPOCH_MS = Date.parse("2025-06-01T00:00:00.000Z");
const TWO_YEARS_MS = 2 * 365 * 24 * 3600 * 1000;

function timestamps(rng: Prng): { createdAt: string; updatedAt: string } {
  const created = EPOCH_MS - Math.floor(rng.next() * TWO_YEARS_MS);
  const updated = created + Math.floor(rng.next() * (EPOCH_MS - created));
  return { createdAt: new Date(created).toISOString(), updatedAt: new Date(updated).toISOString() };
}

const TAGS = ["work", "personal", "todo", "idea", "reference", "urgent", "later", "draft", "meeting", "read"];

/** Seeds `userId`'s workspace; the user must exist and own nothing yet. */
export async function seedNotesWorkspace(
  db: Kysely<Schema>,
  userId: number,
  options: SeedOptions = DEFAULT_SEED_OPTIONS,
): Promise<SeedResult> {
  const started = performance.now();
  let buildMs = 0;
  let storeMs = 0;
  let documentBytes = 0;
  const rng = new Prng(options.seed);

  // The workspace: folders (General has its derived uuid, as /init would make it), then note metadata.
  let mark = performance.now();
  const folders: { uuid: string; name: string; notes: number }[] = [{ uuid: generalFolderUuid(userId), name: "General", notes: 0 }];
  for (let i = 1; i < options.folders; i++) {
    const base = FOLDER_NAMES[(i - 1) % FOLDER_NAMES.length] ?? "Folder";
    folders.push({ uuid: randomUUID(), name: i > FOLDER_NAMES.length ? `${base} ${i}` : base, notes: 0 });
  }
  const root = options.rootFolder === undefined ? undefined : { uuid: randomUUID(), name: options.rootFolder, notes: 0 };
  const workspace = new Y.Doc();
  const noteMetas: { uuid: string; words: number; rare: boolean }[] = [];
  let rootNotes = 0;
  let rareNotes = 0;
  workspace.transact(() => {
    // Fixed times, not drawn: the same seed gives the same notes with or without a root folder.
    const epoch = new Date(EPOCH_MS).toISOString();
    if (root) putFolder(workspace, root.uuid, { name: root.name, parent: null, icon: null, createdAt: epoch, updatedAt: epoch });
    folders.forEach((folder, i) => {
      // Every fifth folder (after the first ten) is nested under one of the first ten.
      const parent = i >= 10 && i % 5 === 0 ? (folders[rng.int(1, 9)]?.uuid ?? null) : (root?.uuid ?? null);
      putFolder(workspace, folder.uuid, { name: folder.name, parent, icon: null, ...timestamps(rng) });
    });
    for (let i = 0; i < options.notes; i++) {
      const uuid = randomUUID();
      // 1% at the root (or in the root folder), the rest spread evenly (at random) over the folders.
      const folder = rng.chance(0.01) ? root : rng.pick(folders);
      if (folder) folder.notes++;
      if (!folder || folder === root) rootNotes++;
      const tags = Array.from({ length: rng.int(0, 3) }, () => rng.pick(TAGS));
      putNote(workspace, uuid, {
        title: title(rng, i),
        folder: folder?.uuid ?? null,
        pinned: rng.chance(0.02),
        tags: [...new Set(tags)],
        ...timestamps(rng),
      });
      const rare = rng.chance(options.rareShare);
      if (rare) rareNotes++;
      noteMetas.push({ uuid, words: rng.int(options.minWords, options.maxWords), rare });
    }
  });
  buildMs += performance.now() - mark;

  mark = performance.now();
  const workspaceName = workspaceDocName(userId);
  await new DocumentStore(db).save(workspaceName, workspace);
  documentBytes += Y.encodeStateAsUpdate(workspace).byteLength;
  await materializeWorkspace(db, userId, workspace);
  storeMs += performance.now() - mark;
  workspace.destroy();

  // Note bodies, a batch at a time: build the documents, then store them and their views in one transaction.
  let totalWords = 0;
  let minWords = Number.POSITIVE_INFINITY;
  let maxWords = 0;
  for (let start = 0; start < noteMetas.length; start += options.batchSize) {
    mark = performance.now();
    const batch = noteMetas.slice(start, start + options.batchSize).map((note) => {
      const generated = body(rng, note.words, note.rare ? options.rareWord : undefined);
      totalWords += generated.words;
      minWords = Math.min(minWords, generated.words);
      maxWords = Math.max(maxWords, generated.words);
      const doc = new Y.Doc();
      writeNoteBody(doc, markdownToJson(generated.markdown));
      documentBytes += Y.encodeStateAsUpdate(doc).byteLength;
      return { uuid: note.uuid, doc };
    });
    buildMs += performance.now() - mark;

    mark = performance.now();
    await db.transaction().execute(async (tx) => {
      const store = new DocumentStore(tx);
      for (const { uuid, doc } of batch) {
        await store.save(noteDocName(uuid), doc);
        await materializeNoteBody(tx, uuid, doc);
      }
    });
    for (const { doc } of batch) doc.destroy();
    storeMs += performance.now() - mark;
  }

  return {
    folders: [...(root ? [root] : []), ...folders].map(({ uuid, name, notes }) => ({ uuid, name, notes })),
    notes: noteMetas.length,
    rootNotes,
    notesWithRareWord: rareNotes,
    totalWords,
    minWords: noteMetas.length > 0 ? minWords : 0,
    maxWords,
    documentBytes,
    buildMs,
    storeMs,
    totalMs: performance.now() - started,
  };
}
