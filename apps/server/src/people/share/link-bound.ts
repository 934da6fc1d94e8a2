import type { AnyAgentTool } from "../../agent/tools/agent-tool";
import type { RunGrant } from "../../agent/tools/run-grant";
import type { AppContext } from "../../context";
import { forbidden } from "../../http/errors";
import { fromLiveOrigin } from "../network/permissions";
import { linkReach } from "./share-grant";
import { liveLinkById, type ShareLinkRow } from "./share-links";

/**
 * What a contact made by redeeming a share link (`POST /network/connect`) may do is bounded by
 * that link and ends with it. The server records the link on the rows it made (`share_link_id`);
 * every use reads the link again, so a revoked, expired or deleted link stops its contacts at the
 * next request, and a run already going at its next tool call and before it answers.
 */

export const linkEnded = () =>
  forbidden("agent_permission_required", "The share link this access came from has ended; ask for agent access (POST /network/request)");

/** An agent permission `grantorId` gave `granteeId`, as a run may use it now. */
export interface UsablePermission {
  readonly permissions: unknown;
  /** The live link it was born of; null when it is the grantor's own decision (the handshake). */
  readonly link: ShareLinkRow | null;
}

/** The permission, or null when there is none or it was born of a link that is no longer live. */
export async function usableContactPermission(app: AppContext, grantorId: number, granteeId: number): Promise<UsablePermission | null> {
  const row = await app.db
    .selectFrom("contact_permissions")
    .select(["permissions", "share_link_id"])
    .where("grantor_id", "=", grantorId)
    .where("grantee_id", "=", granteeId)
    .executeTakeFirst();
  if (!row) return null;
  const permissions: unknown = JSON.parse(row.permissions);
  if (row.share_link_id === null) return { permissions, link: null };
  const link = await liveLinkById(app, Number(row.share_link_id));
  return link && Number(link.owner_id) === grantorId ? { permissions, link } : null;
}

/**
 * `grant` cut down to what the link's guests reach now: its scopes and folders only (never the
 * agent's Memory, never write on a read-only link), whatever the stored permission says. A PATCH of
 * the link applies at once.
 */
export async function boundByLink(app: AppContext, link: ShareLinkRow, grant: RunGrant): Promise<RunGrant> {
  const reach = await linkReach(app, link);
  const folders = grant.folders === "all" ? reach.folders : new Set([...grant.folders].filter((id) => reach.folders.has(id)));
  const rootNotes = (grant.folders === "all" || grant.rootNotes === true) && reach.rootNotes;
  return { ...grant, scopes: new Set([...grant.scopes].filter((scope) => reach.scopes.has(scope))), folders, rootNotes };
}

/** A run's tool wrapper: each call first reads the link again, and fails once it is no longer live. */
export function whileLinkLive(app: AppContext, linkId: number): (tool: AnyAgentTool) => AnyAgentTool {
  return (tool) => ({
    ...tool,
    execute: async (input, context) => {
      if (!(await liveLinkById(app, linkId))) throw linkEnded();
      return tool.execute(input, context);
    },
  });
}

/** Maintenance: deletes the rows of links that expired (they are already not honoured). */
export async function sweepEndedLinkContacts(app: AppContext): Promise<void> {
  const now = app.clock.iso();
  for (const table of ["contact_permissions", "contacts"] as const) {
    await app.db
      .deleteFrom(table)
      .where("share_link_id", "is not", null)
      .where((eb) => eb.not(fromLiveOrigin(table, now)))
      .execute();
  }
}
