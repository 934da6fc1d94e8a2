import { clientGoneSignal, withChatRunSlot } from "../../agent/chat/chat-routes";
import { ModelNoteSummaries } from "../../agent/summaries/model-note-summaries";
import { checkBudgets, recordModelCall } from "../../agent/usage/meters";
import type { AppContext } from "../../context";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { sharedFolders } from "../../people/sharing/access";
import { grepNotes, regexRunnerFor, userGrepLine } from "../grep/grep-service";
import { searchMemory } from "../memory/memory-service";
import { searchNotes } from "../search/search-index";
import { takeSnapshot } from "../snapshots/snapshots-service";
import { copyNote, createNote, getNote, listNotes, moveNote, pinNote, updateNote } from "./notes-service";
import { notesSummary, type WrittenSummaries } from "./notes-stats";

type NoteRouteId =
  | "listNotes"
  | "createNote"
  | "getNote"
  | "updateNote"
  | "copyNote"
  | "moveNote"
  | "pinNote"
  | "grepNotes"
  | "searchNotes"
  | "notesSummary"
  | "memorySearch";

export function noteHandlers(context: AppContext): RouteHandlers<NoteRouteId> {
  const { db } = context;
  const regexRunner = regexRunnerFor(context);
  // With a remote provider the model writes note summaries (cached per note version); the local one's are extractive.
  const modelSummaries = context.config.modelProvider === "local" ? undefined : new ModelNoteSummaries(context.models);
  return {
    notesSummary: async ({ input, principal, req, res }) => {
      // A model call takes one of the user's run slots, as a chat run does, and stops when the client leaves.
      const signal = clientGoneSignal(req, res);
      // A model writes them: the caller's budgets are checked before the model is called.
      if (modelSummaries) await checkBudgets(context, { userId: principal.userId, apiKeyId: principal.credential.id });
      const written: WrittenSummaries | undefined =
        modelSummaries &&
        ((notes) =>
          modelSummaries.summarise(notes, {
            onUsage: async (usage) => {
              await recordModelCall(
                context,
                { userId: principal.userId, apiKeyId: principal.credential.id },
                { ...usage, source: "summary" },
              );
            },
            signal,
            slot: (work) => withChatRunSlot(context, principal.userId, work),
          }));
      return { success: true, ...(await notesSummary(db, principal.userId, input.query.limit, written)) };
    },
    memorySearch: async ({ input, principal }) => {
      const limit = input.body.maxResults ?? input.body.limit ?? 10;
      return {
        success: true,
        result: {
          results: await searchMemory(db, context.database.dialect, principal.userId, input.body.query, limit, undefined, context.embedder),
        },
      };
    },
    searchNotes: async ({ input, principal }) => {
      const sharedFolderIds = [...(await sharedFolders(db, principal.userId)).keys()];
      const hits = await searchNotes(
        db,
        context.database.dialect,
        { ownerId: principal.userId, sharedFolderIds },
        input.body.query,
        input.body.limit,
        context.embedder,
      );
      return { success: true, results: hits.map(({ id, title, snippet, score, folderId }) => ({ id, title, snippet, score, folderId })) };
    },
    grepNotes: async ({ input, principal }) => ({
      success: true,
      ...(await grepNotes(db, { runner: regexRunner, caller: userGrepLine(principal.userId) }, principal.userId, input.body)),
    }),
    listNotes: async ({ input, principal }) => {
      const result = await listNotes(db, principal.userId, input.query);
      const folder = result.folder && { id: result.folder.id, name: result.folder.name };
      return { success: true, ...result, folder };
    },
    createNote: async ({ input, principal }) => {
      const note = await createNote(context, principal.userId, input.body);
      return created({ success: true, result: { note }, message: `Created note "${note.title}"` });
    },
    getNote: async ({ input, principal }) => ({ success: true, note: await getNote(context, principal.userId, input.params.id) }),
    updateNote: async ({ input, principal }) => {
      // PATCH keeps what it overwrites: the current body is snapshotted before a new one is written.
      await updateNote(context, principal.userId, input.params.id, input.body, (row) =>
        takeSnapshot(context, row, "Before update", true).then(() => {}),
      );
      return { success: true, message: "Note updated" };
    },
    copyNote: async ({ input, principal }) => {
      const note = await copyNote(context, principal.userId, input.params.id, input.body ?? {});
      return created({
        success: true,
        result: { note },
        message: `Copied into ${note.folderId === null ? "the root" : `folder ${note.folderId}`}`,
      });
    },
    moveNote: async ({ input, principal }) => {
      const folder = await moveNote(context, principal.userId, input.params.id, input.body);
      return { success: true, message: folder ? `Moved to "${folder.name}"` : "Moved to the root" };
    },
    pinNote: async ({ input, principal }) => {
      await pinNote(context, principal.userId, input.params.id, input.body.pinned);
      return { success: true, message: input.body.pinned ? "Pinned" : "Unpinned" };
    },
  };
}
