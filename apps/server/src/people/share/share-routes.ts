import type { shareRoutes } from "@tandem/core";
import type { Request } from "express";
import { recordAudit } from "../../audit/audit-log";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { guestTranscript, listGuestConversations } from "./guest-conversations";
import { sweepEndedLinkContacts } from "./link-bound";
import { expireStaleGuestMessages, pendingGuestMessages, replyToGuest } from "./local-guest-messages";
import { connectThroughLink } from "./share-connect";
import type { ShareGuard } from "./share-guard";
import {
  analyticsFor,
  createShareLink,
  linkView,
  listShareLinks,
  publicOrigin,
  revokeShareLink,
  type ShareLinkRow,
  updateShareLink,
} from "./share-links";

export async function linkViews(app: AppContext, req: Request, links: readonly ShareLinkRow[]) {
  const analytics = await analyticsFor(
    app.db,
    links.map((l) => Number(l.id)),
  );
  const origin = publicOrigin(app, req);
  return links.map((link) => linkView(app, link, origin, analytics.get(Number(link.id))));
}

/** Link changes go in the owner's audit log (never the token: the entry names the link by id). */
function audit(app: AppContext, actor: UserPrincipal, action: string, linkId: number, detail?: Record<string, unknown>) {
  return recordAudit(app.db, app.clock, { actor, action, objectType: "share_link", objectId: linkId, parties: [actor.userId], detail });
}

export function shareHandlers(app: AppContext, guard: ShareGuard): RouteHandlers<keyof typeof shareRoutes> {
  // A guest message whose wait ended without the server hearing of it (a restart mid-wait) is
  // stale: nobody will read a reply, so the bridge stops seeing it.
  app.maintenance.add("share.guest-messages.expire", () => expireStaleGuestMessages(app));
  // Contacts made by a link that expired are no longer honoured; this deletes their rows.
  app.maintenance.add("share.link-contacts.sweep", () => sweepEndedLinkContacts(app));
  return {
    createShareLink: async ({ input, principal, req }) => {
      const link = await createShareLink(app, principal.userId, input.body);
      await audit(app, principal, "share.link.create", Number(link.id), { scope: link.scope, expiresAt: link.expires_at });
      const [shareLink] = await linkViews(app, req, [link]);
      return created({ success: true, shareLink });
    },
    listShareLinks: async ({ input, principal, req }) => {
      const links = await listShareLinks(app, principal.userId, input.query.status, input.query.limit);
      return { success: true, links: await linkViews(app, req, links) };
    },
    updateShareLink: async ({ input, principal, req }) => {
      const link = await updateShareLink(app, principal.userId, input.params.id, input.body);
      await audit(app, principal, "share.link.update", input.params.id, { fields: Object.keys(input.body) });
      const [shareLink] = await linkViews(app, req, [link]);
      return { success: true, shareLink };
    },
    revokeShareLink: async ({ input, principal }) => {
      const revokedAt = await revokeShareLink(app, principal.userId, input.params.id);
      await audit(app, principal, "share.link.revoke", input.params.id);
      return { success: true, id: input.params.id, revokedAt };
    },
    guestConversations: async ({ input, principal }) => ({
      success: true,
      conversations: await listGuestConversations(app, principal.userId, input.query),
      limit: input.query.limit,
      offset: input.query.offset,
    }),
    guestConversation: async ({ input, principal }) => ({
      success: true,
      ...(await guestTranscript(app, principal.userId, input.params.sessionId)),
    }),
    networkConnect: async ({ input, principal, req }) => {
      const link = await guard.redeem(input.body.shareToken, req.socket.remoteAddress ?? "unknown");
      return { success: true, ...(await connectThroughLink(app, principal, link)) };
    },
    listGuestMessages: async ({ input, principal }) => ({
      success: true,
      messages: await pendingGuestMessages(app, principal.userId, input.query.limit),
    }),
    pollGuestMessages: async ({ input, principal }) => ({
      success: true,
      messages: await pendingGuestMessages(app, principal.userId, input.body.limit),
    }),
    replyGuestMessage: async ({ input, principal }) => {
      await replyToGuest(app, principal.userId, input.body.messageId, input.body.body);
      return { success: true, messageId: input.body.messageId, delivered: true as const };
    },
  };
}
