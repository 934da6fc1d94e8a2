import { recordAudit } from "../../audit/audit-log";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { badRequest } from "../../http/errors";
import { loadPeople } from "../network/network-people";
import { lockPair } from "../network/pair-lock";
import type { ShareLinkRow } from "./share-links";

/** What redeeming a link gives the redeemer's agent, in the per-contact permission's words. */
export function permissionsFromLink(link: ShareLinkRow): Record<string, unknown> {
  const notesScope =
    link.scope === "note_only"
      ? { scope: "note", noteId: Number(link.note_id) }
      : link.scope === "folders"
        ? { scope: "folders", folderIds: JSON.parse(link.folder_ids) as number[] }
        : { scope: "all" };
  return {
    notesAccess: { ...notesScope, access: link.notes_access === "read" ? "read" : "write" },
    calendarAccess: { read: link.access === "read" ? "none" : "free_busy", write: link.access === "read_calendar_write" },
    emailAccess: { read: link.email === 1 },
    todosAccess: { read: link.todos === 1 },
    shareLink: Number(link.id),
  };
}

/**
 * `POST /network/connect`: the caller becomes the link owner's contact, and the owner's agent
 * permission to the caller is what the link allows. What the link makes is recorded as the link's
 * (`share_link_id`), bounded by it and ended with it (see `link-bound.ts`). A permission or
 * contact the owner gave by hand (the handshake) is kept as it is: a link never narrows or widens
 * what the owner decided. One made by another link is replaced: the last link redeemed decides.
 */
export async function connectThroughLink(app: AppContext, caller: UserPrincipal, link: ShareLinkRow) {
  const ownerId = Number(link.owner_id);
  const linkId = Number(link.id);
  if (ownerId === caller.userId) throw badRequest("own_link", "This is your own share link");
  const now = app.clock.iso();
  const permissions = permissionsFromLink(link);
  const json = JSON.stringify(permissions);
  const result = await app.db.transaction().execute(async (tx) => {
    await lockPair(tx, app.database.dialect, ownerId, caller.userId);
    let changed = false;
    for (const [a, b] of [
      [ownerId, caller.userId],
      [caller.userId, ownerId],
    ] as const) {
      const existing = await tx
        .selectFrom("contacts")
        .select("share_link_id")
        .where("user_id", "=", a)
        .where("contact_id", "=", b)
        .executeTakeFirst();
      if (!existing) {
        await tx.insertInto("contacts").values({ user_id: a, contact_id: b, created_at: now, share_link_id: linkId }).execute();
        changed = true;
      } else if (existing.share_link_id !== null && Number(existing.share_link_id) !== linkId) {
        await tx
          .updateTable("contacts")
          .set({ share_link_id: linkId, created_at: now })
          .where("user_id", "=", a)
          .where("contact_id", "=", b)
          .execute();
        changed = true;
      }
    }
    const existing = await tx
      .selectFrom("contact_permissions")
      .select(["permissions", "share_link_id"])
      .where("grantor_id", "=", ownerId)
      .where("grantee_id", "=", caller.userId)
      .executeTakeFirst();
    const ownersOwn = existing !== undefined && existing.share_link_id === null;
    if (!existing) {
      await tx
        .insertInto("contact_permissions")
        .values({
          grantor_id: ownerId,
          grantee_id: caller.userId,
          permissions: json,
          created_at: now,
          updated_at: now,
          share_link_id: linkId,
        })
        .execute();
      changed = true;
    } else if (!ownersOwn && Number(existing.share_link_id) !== linkId) {
      await tx
        .updateTable("contact_permissions")
        .set({ permissions: json, share_link_id: linkId, created_at: now, updated_at: now })
        .where("grantor_id", "=", ownerId)
        .where("grantee_id", "=", caller.userId)
        .execute();
      changed = true;
    }
    await recordAudit(tx, app.clock, {
      actor: caller,
      action: "network.share_link.connect",
      objectType: "share_link",
      objectId: String(link.id),
      parties: [ownerId, caller.userId],
      detail: { changed },
    });
    // What the caller holds now: the owner's own permission, or this link's (as the owner may have narrowed it).
    const held = existing && (ownersOwn || Number(existing.share_link_id) === linkId) ? existing.permissions : json;
    return { changed, permissions: JSON.parse(held) as Record<string, unknown> };
  });
  const owner = (await loadPeople(app.db, [ownerId])).get(ownerId);
  return {
    status: result.changed ? ("connected" as const) : ("already_connected" as const),
    contact: { userId: String(ownerId), username: owner?.username ?? "", name: owner?.name ?? "" },
    permissions: result.permissions,
    conversationId: null,
  };
}
