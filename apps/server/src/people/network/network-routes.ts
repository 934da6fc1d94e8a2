import type { netRoutes, networkRoutes } from "@tandem/core";
import type { Request } from "express";
import type { AppContext } from "../../context";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { recentVisitors } from "../share/guest-conversations";
import { listShareLinks } from "../share/share-links";
import { linkViews } from "../share/share-routes";
import { listPendingRequests, resolveContactRequest, sendContactRequest, withdrawContactRequest } from "./contact-requests";
import { listContacts, removeContact, updatePermissions, withdrawPermission } from "./contacts";

/** Contacts, the caller's live share links with their analytics, and their links' recent visitors. */
async function overview(context: AppContext, userId: number, req: Request) {
  const contacts = await listContacts(context.db, userId, context.clock.iso());
  const count = (direction: string) => contacts.filter((c) => c.direction === direction).length;
  const allLinks = await linkViews(context, req, await listShareLinks(context, userId, "all", Number.MAX_SAFE_INTEGER));
  const shareLinks = allLinks.filter((link) => link.isActive);
  const visitors = await recentVisitors(context, userId);
  const totals = allLinks.reduce(
    (sum, link) => ({
      visitors: sum.visitors + link.analytics.uniqueVisitors,
      conversations: sum.conversations + link.analytics.totalConversations,
      messages: sum.messages + link.analytics.totalMessages,
    }),
    { visitors: 0, conversations: 0, messages: 0 },
  );
  return {
    success: true as const,
    network: {
      shareLinks,
      visitors,
      contacts,
      summary: {
        totalLinks: allLinks.length,
        activeLinks: shareLinks.length,
        totalVisitors: totals.visitors,
        totalConversations: totals.conversations,
        totalMessages: totals.messages,
        totalContacts: contacts.length,
        mutual: count("mutual"),
        inbound: count("inbound"),
        outbound: count("outbound"),
      },
    },
  };
}

/**
 * The handshake's handlers. The `/net/...` aliases of these routes need none of their own: the
 * router answers each with its original's handler (`aliasOf` in the route table).
 */
export function networkHandlers(context: AppContext): RouteHandlers<keyof typeof networkRoutes | keyof typeof netRoutes> {
  return {
    networkRequest: async ({ input, principal }) =>
      created({ success: true, ...(await sendContactRequest(context, principal, input.body.to)) }),
    netContactsRequest: async ({ input, principal }) => {
      const { status, ...sent } = await sendContactRequest(context, principal, input.body.to);
      return created({ success: true, status: status === "accepted" ? "approved" : "requested", ...sent });
    },
    networkListRequests: async ({ principal }) => ({ success: true, ...(await listPendingRequests(context.db, principal.userId)) }),
    networkAccept: async ({ input, principal }) => ({ success: true, ...(await resolveContactRequest(context, principal, input.body)) }),
    networkWithdrawRequest: async ({ input, principal }) => ({
      success: true,
      ...(await withdrawContactRequest(context, principal, input.params.requestId)),
    }),
    networkOverview: ({ principal, req }) => overview(context, principal.userId, req),
    osNetworkOverview: ({ principal, req }) => overview(context, principal.userId, req),
    networkUpdatePermissions: async ({ input, principal }) => {
      const { userId } = input.params;
      const result = await updatePermissions(context, principal, userId, input.body.permissions);
      return { success: true, userId: String(userId), ...result, message: `Updated what user ${userId}'s agent may reach` };
    },
    networkWithdrawPermissions: async ({ input, principal }) => {
      const { userId } = input.params;
      const grantsEnded = (await withdrawPermission(context, principal, userId)).length;
      return {
        success: true,
        userId: String(userId),
        grantsEnded,
        message: `Withdrew user ${userId}'s agent access${grantsEnded > 0 ? `; ended ${grantsEnded} grant${grantsEnded === 1 ? "" : "s"}` : ""}`,
      };
    },
    networkRemoveContact: async ({ input, principal }) => {
      const { userId } = input.params;
      await removeContact(context, principal, userId);
      return { success: true, userId: String(userId), message: `User ${userId} is no longer one of your contacts` };
    },
  };
}
