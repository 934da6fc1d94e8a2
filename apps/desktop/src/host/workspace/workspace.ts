import { isUuid, type TandemClient } from "@tandem/core";
import { z } from "zod";
import type { NoteSearchAnswer, SnapshotSummary } from "../../shared/desktop-api";
import type { WorkspaceFacet } from "../facets";
import type { HostContext, SyncService } from "../host-context";
import { onServer } from "../on-server";
import { parseInput } from "../parse-input";
import { searchLocally } from "./local-search";
import { NoteIdDirectory } from "./note-ids";
import { notePreviews } from "./note-previews";

/** Hits answered per search, from either source. */
const SEARCH_LIMIT = 30;
/** Snapshots listed per note (the route's default page). */
const SNAPSHOT_PAGE = 50;

const OFFLINE = "Snapshots are kept on the server, which cannot be reached right now; try again once you are back online";

const NoteUuid = z.string().refine(isUuid, { error: "must be a lowercase uuid" });
const SearchInput = z.object({ query: z.string().trim().min(1, { error: "must not be empty" }).max(500) });
const NoteInput = z.object({ noteUuid: NoteUuid });
const PreviewsInput = z.object({ noteUuids: z.array(NoteUuid).max(500) });
const SnapshotInput = z.object({ noteUuid: NoteUuid, seq: z.number().int().positive() });
const CreateSnapshotInput = z.object({ noteUuid: NoteUuid, label: z.string().trim().max(200).optional() });

function summaryOf(snapshot: { seq: number; label: string | null; createdAt: string; wordCount: number }): SnapshotSummary {
  return { seq: snapshot.seq, label: snapshot.label, createdAt: snapshot.createdAt, wordCount: snapshot.wordCount };
}

/**
 * Search and snapshots. Search asks the server (ranked full-text) and, offline or when the server
 * fails, scans this machine's copies of the documents. Snapshots exist only on the server, so
 * those methods need it and say so plainly when it is out of reach.
 */
export function createWorkspaceFacet(context: HostContext, sync: SyncService): WorkspaceFacet {
  // The uuid ↔ id pairs belong to one account on one server.
  let directory: { account: string; ids: NoteIdDirectory } | undefined;

  const signedIn = (): { client: TandemClient; ids: NoteIdDirectory; userId: number } => {
    const credentials = context.session.credentials();
    const client = context.session.client();
    if (!credentials || !client) throw new Error("Sign in first");
    const account = `${credentials.serverUrl}#${credentials.userId}`;
    if (directory?.account !== account) directory = { account, ids: new NoteIdDirectory(client) };
    return { client, ids: directory.ids, userId: credentials.userId };
  };

  /** The note's id on the server, or an error saying why there is none. */
  const noteIdOf = async (ids: NoteIdDirectory, noteUuid: string): Promise<number> => {
    const id = await onServer(() => ids.idOf(noteUuid), OFFLINE);
    if (id === undefined) throw new Error("The server does not have this note yet; snapshots become available once it has synced");
    return id;
  };

  const searchOnServer = async (client: TandemClient, ids: NoteIdDirectory, query: string): Promise<NoteSearchAnswer> => {
    const { results } = await client.call("searchNotes", { body: { query, limit: SEARCH_LIMIT } });
    await ids.learnFolders(results.map((result) => result.folderId));
    const hits = await Promise.all(
      results.map(async (result) => ({ uuid: await ids.uuidOf(result.id), title: result.title, snippet: result.snippet })),
    );
    return { source: "server", results: hits };
  };

  return {
    async searchNotes(input) {
      const { query } = parseInput("searchNotes", SearchInput, input);
      const { client, ids, userId } = signedIn();
      // Known to be offline: answer at once rather than wait for a connection to fail.
      if (sync.status().state !== "offline") {
        try {
          return await searchOnServer(client, ids, query);
        } catch {
          // Unreachable, or refusing (a key without search scope): this machine's copy still answers.
        }
      }
      return { source: "local", results: await searchLocally(sync, userId, query, SEARCH_LIMIT) };
    },

    async notePreviews(input) {
      const { noteUuids } = parseInput("notePreviews", PreviewsInput, input);
      return notePreviews(sync, noteUuids);
    },

    async listSnapshots(input) {
      const { noteUuid } = parseInput("listSnapshots", NoteInput, input);
      const { client, ids } = signedIn();
      const noteId = await noteIdOf(ids, noteUuid);
      const { snapshots } = await onServer(
        () => client.call("listSnapshots", { params: { noteId }, query: { limit: SNAPSHOT_PAGE } }),
        OFFLINE,
      );
      return snapshots.map(summaryOf);
    },

    async getSnapshot(input) {
      const { noteUuid, seq } = parseInput("getSnapshot", SnapshotInput, input);
      const { client, ids } = signedIn();
      const noteId = await noteIdOf(ids, noteUuid);
      const { snapshot } = await onServer(() => client.call("getSnapshotBySeq", { params: { noteId, seq } }), OFFLINE);
      return { ...summaryOf(snapshot), html: snapshot.content };
    },

    async createSnapshot(input) {
      const { noteUuid, label } = parseInput("createSnapshot", CreateSnapshotInput, input);
      const { client, ids } = signedIn();
      const noteId = await noteIdOf(ids, noteUuid);
      const body = label ? { label } : {};
      return summaryOf(await onServer(() => client.call("createSnapshot", { params: { noteId }, body }), OFFLINE));
    },

    async restoreSnapshot(input) {
      const { noteUuid, seq } = parseInput("restoreSnapshot", SnapshotInput, input);
      const { client, ids } = signedIn();
      const noteId = await noteIdOf(ids, noteUuid);
      await onServer(() => client.call("restoreSnapshot", { params: { noteId }, body: { seq } }), OFFLINE);
    },
  };
}
