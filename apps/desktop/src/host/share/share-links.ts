import type { ShareLinkView } from "@tandem/core";
import { z } from "zod";
import type { GuestConversationItem, ShareLinkItem } from "../../shared/desktop-api";
import { connectionsCall, isObjectMissing, isRouteMissing, lacksScope } from "../connections/connections-call";
import type { ShareFacet } from "../facets";
import type { SessionService } from "../host-context";
import { previewOf } from "../inbox/inbox-read";
import { parseInput } from "../parse-input";

export const SHARE_OFFLINE = "Can't reach the server right now. Share links are kept on the server; try again once you are back online.";
export const SHARE_UNSUPPORTED = "This server doesn't support share links yet.";
export const SHARE_NOT_ALLOWED =
  "This desktop's key is not allowed to manage share links: it lacks the os.share:read, os.share:write and os.network:read permissions. " +
  "A desktop signed in with a pairing code never has them. To manage share links here, sign out and sign in with an API key that has them.";
const LINK_GONE = "This share link is no longer there; it may have been revoked elsewhere.";

const Expiry = z.enum(["1h", "24h", "7d", "30d", "90d", "never"]);
const LinkId = z.number().int().positive();
const CreateInput = z.object({
  label: z.string().trim().max(200, { error: "The label is at most 200 characters" }),
  expiresIn: Expiry,
  notesAccess: z.enum(["read", "write"]),
  todos: z.boolean(),
  requireSignIn: z.boolean(),
  identity: z.boolean(),
  localAgent: z.boolean(),
});
const RenewInput = z.object({ id: LinkId, expiresIn: Expiry });
const IdInput = z.object({ id: LinkId });
const ConversationsInput = z.object({
  shareToken: z
    .string()
    .regex(/^[A-Za-z0-9]{1,64}$/)
    .optional(),
});
const SessionInput = z.object({ sessionId: z.string().min(1).max(64) });

type GuestRow = {
  sessionId: string;
  shareToken: string;
  linkLabel: string;
  guestName: string | null;
  visitor: { name: string | null; username: string | null; userId?: string | null; fingerprint: string };
  messageCount: number;
  lastContent: string | null;
  lastActiveAt: string;
};

/** What a link's guests' agent may reach, in words. */
export function capabilitiesInWords(
  link: Pick<ShareLinkView, "target" | "scope" | "notesAccess" | "capabilities" | "localAgent">,
): string[] {
  const words: string[] = [];
  if (link.target === "note" || link.scope === "note_only") words.push("Talks about one note");
  else {
    const where = link.scope === "folders" ? "notes in some folders" : "notes";
    words.push(link.notesAccess === "read" ? `Reads your ${where}` : `Reads and writes your ${where}`);
  }
  if (link.capabilities.todos) words.push("Reads your todos");
  if (link.localAgent) words.push("Answered from this computer's coding agent when it answers in time");
  return words;
}

export function shareLinkItem(link: ShareLinkView): ShareLinkItem {
  return {
    id: link.id,
    label: link.label,
    url: link.url,
    token: link.token,
    capabilities: capabilitiesInWords(link),
    requireSignIn: link.requireSignIn,
    localAgent: link.localAgent,
    active: link.isActive,
    expiresAt: link.expiresAt,
    revokedAt: link.revokedAt,
    createdAt: link.createdAt,
    visitors: link.analytics.uniqueVisitors,
    conversations: link.analytics.totalConversations,
    messages: link.analytics.totalMessages,
  };
}

export function guestConversationItem(row: GuestRow): GuestConversationItem {
  const named = row.guestName?.trim() || row.visitor.name?.trim() || row.visitor.username?.trim();
  return {
    sessionId: row.sessionId,
    shareToken: row.shareToken,
    visitorKey: `${row.shareToken}:${row.visitor.userId ? `u${row.visitor.userId}` : `f${row.visitor.fingerprint}`}`,
    guest: named || `Visitor ${row.visitor.fingerprint.slice(0, 6)}`,
    linkLabel: row.linkLabel,
    messageCount: row.messageCount,
    lastMessage: row.lastContent === null ? null : previewOf(row.lastContent),
    lastActiveAt: row.lastActiveAt,
  };
}

/** A 404 on one link or conversation: gone (revoked or removed elsewhere), or no such routes at all. */
function gone(what: string) {
  return (error: unknown): never => {
    if (isRouteMissing(error)) throw new Error(SHARE_UNSUPPORTED, { cause: error });
    if (isObjectMissing(error)) throw new Error(what, { cause: error });
    throw error;
  };
}

/** Share links for guests: listing, creating, renewing and revoking them, and reading their visitors' conversations. */
export function createShareFacet(session: SessionService): ShareFacet {
  const signedIn = () => {
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  const call = <T>(request: () => Promise<T>) => connectionsCall(request, SHARE_OFFLINE);
  return {
    async listShareLinks() {
      const client = signedIn();
      try {
        const { links } = await call(() => client.call("listShareLinks", { query: { status: "active", limit: 50 } }));
        return { supported: true, links: links.map(shareLinkItem) };
      } catch (error) {
        if (isRouteMissing(error)) return { supported: false, links: [] };
        if (lacksScope(error)) return { supported: true, links: [], notAllowed: SHARE_NOT_ALLOWED };
        throw error;
      }
    },

    async createShareLink(input) {
      const body = parseInput("createShareLink", CreateInput, input);
      const client = signedIn();
      const { shareLink } = await call(() => client.call("createShareLink", { body: { target: "agent", scope: "all", ...body } })).catch(
        gone(SHARE_UNSUPPORTED),
      );
      return shareLinkItem(shareLink);
    },

    async renewShareLink(input) {
      const { id, expiresIn } = parseInput("renewShareLink", RenewInput, input);
      const client = signedIn();
      const { shareLink } = await call(() => client.call("updateShareLink", { params: { id }, body: { expiresIn } })).catch(
        gone(LINK_GONE),
      );
      return shareLinkItem(shareLink);
    },

    async revokeShareLink(input) {
      const { id } = parseInput("revokeShareLink", IdInput, input);
      const client = signedIn();
      await call(() => client.call("revokeShareLink", { params: { id } })).catch((error: unknown) => {
        // Already gone (revoked elsewhere): what the owner asked for is done.
        if (isObjectMissing(error)) return;
        throw error;
      });
    },

    async listGuestConversations(input) {
      const { shareToken } = parseInput("listGuestConversations", ConversationsInput, input ?? {});
      const client = signedIn();
      const { conversations } = await call(() =>
        client.call("guestConversations", { query: { limit: 50, ...(shareToken ? { shareToken } : {}) } }),
      ).catch(gone(SHARE_UNSUPPORTED));
      return conversations.map(guestConversationItem);
    },

    async getGuestConversation(input) {
      const { sessionId } = parseInput("getGuestConversation", SessionInput, input);
      const client = signedIn();
      const answer = await call(() => client.call("guestConversation", { params: { sessionId } })).catch(
        gone("This guest conversation is no longer there."),
      );
      return {
        conversation: guestConversationItem(answer.session),
        messages: answer.messages.map((message) => ({
          id: message.id,
          from: message.role === "user" ? ("guest" as const) : ("agent" as const),
          content: message.content,
          createdAt: message.createdAt,
        })),
      };
    },
  };
}
