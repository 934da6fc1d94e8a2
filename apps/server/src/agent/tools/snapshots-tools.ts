import { z } from "zod";
import { listSnapshots, restoreSnapshot, takeSnapshot } from "../../workspace/snapshots/snapshots-service";
import { type AnyAgentTool, defineTool } from "./agent-tool";
import { noteInGrant } from "./grant-scope";
import { EntityId, limitOf } from "./tool-inputs";

const NoteId = EntityId.describe("the note's id");

const listSnapshotsTool = defineTool({
  name: "list_snapshots",
  namespace: "snapshots",
  source: "native",
  readWrite: "read",
  needs: "os.snapshots:read",
  route: "listSnapshots",
  description: "List a note's saved versions (snapshots), newest first: each has a seq number, a label and when it was taken.",
  input: z.object({
    noteId: NoteId,
    limit: limitOf(20),
  }),
  async execute({ noteId, limit }, context) {
    await noteInGrant(context, noteId, "read");
    const { snapshots } = await listSnapshots(context.app.db, context.grant.ownerId, noteId, limit);
    return { snapshots: snapshots.map(({ seq, label, createdAt }) => ({ seq, label, createdAt })) };
  },
});

const saveSnapshotTool = defineTool({
  name: "save_snapshot",
  namespace: "snapshots",
  source: "native",
  readWrite: "write",
  needs: "os.snapshots:write",
  // As over REST: a snapshot copies the note's body, so it needs reading the note.
  alsoNeeds: ["os.notes:read"],
  route: "createSnapshot",
  description: "Save the note's current content as a snapshot, optionally labelled, so it can be restored later.",
  input: z.object({
    noteId: NoteId,
    label: z.string().trim().max(200).optional().describe("a few words saying what this version is"),
  }),
  async execute({ noteId, label }, context) {
    const note = await noteInGrant(context, noteId, "write");
    const snapshot = await takeSnapshot(context.app, note, label || null, false);
    return { snapshot: { seq: snapshot.seq } };
  },
});

const restoreSnapshotTool = defineTool({
  name: "restore_snapshot",
  namespace: "snapshots",
  source: "native",
  readWrite: "write",
  needs: "os.snapshots:write",
  // As over REST: restoring rewrites the note.
  alsoNeeds: ["os.notes:write"],
  route: "restoreSnapshot",
  description:
    "Bring a note back to one of its snapshots, named by seq (from list_snapshots) or versionId. The content it replaces is saved as a snapshot first.",
  input: z
    .object({
      noteId: NoteId,
      seq: EntityId.optional().describe("the snapshot's seq"),
      versionId: EntityId.optional().describe("the snapshot's versionId (older clients)"),
    })
    .refine((input) => input.seq !== undefined || input.versionId !== undefined, { message: "give seq or versionId", path: ["seq"] }),
  async execute({ noteId, seq, versionId }, context) {
    // Restoring writes the note: it must be writable within the grant, whatever the scope allows.
    await noteInGrant(context, noteId, "write");
    await restoreSnapshot(context.app, context.grant.ownerId, noteId, seq !== undefined ? { seq } : { versionId });
    return { restored: true };
  },
});

export const SNAPSHOT_TOOLS: readonly AnyAgentTool[] = [listSnapshotsTool, saveSnapshotTool, restoreSnapshotTool];
