import { z } from "zod";
import { Id, IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** A contact or handshake request is about one of two things. */
export const ContactRequestType = z.enum(["friend", "agent"]);
export type ContactRequestType = z.infer<typeof ContactRequestType>;

/** Someone on the other side of the handshake; `userId` in principal-id form (a decimal string). */
export const NetworkPerson = z.object({
  userId: z.string().describe("the user id as a string, as runtime objects name people"),
  username: z.string(),
  name: z.string().describe("the display name; the username when none is set"),
});
export type NetworkPerson = z.infer<typeof NetworkPerson>;

/** A principal id as text: a user id written as a decimal string. */
export const PrincipalIdText = z.string().regex(/^[1-9][0-9]{0,15}$/, { error: "must be a principal id (a user id as a string)" });

/** The largest permissions object, as UTF-8 JSON. */
export const MAX_PERMISSIONS_BYTES = 4096;
export const MAX_PERMISSION_CAPABILITIES = 32;

// A capability or setting name. Starting with a letter keeps out `__proto__` and friends.
const PermissionKey = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, { error: "names must start with a letter and use letters, digits, '_', '.' or '-' (≤ 64)" });
const PermissionScalar = z.union([z.string().max(200), z.boolean(), z.number().finite()]);
const PermissionSetting = z.union([PermissionScalar, z.array(z.string().max(200)).max(50)]);
/** A level: a word (`read`), a flag, or a small object of settings such as `{read: "free_busy", write: false}`. */
const PermissionLevel = z.union([PermissionScalar, z.record(PermissionKey, PermissionSetting)], {
  error: "a level must be a string, a boolean, a number or an object of such settings (arrays of strings allowed inside)",
});

/**
 * What an accepted agent request lets the requester's agent reach: capability → level, e.g.
 * `{"notesAccess": {"scope": "all", "access": "read"}, "emailAccess": {"read": false}}`. Stored
 * per contact; the existence of the permission (even `{}`) is what grants require.
 */
export const ContactPermissions = z
  .record(PermissionKey, PermissionLevel, { error: "must be an object mapping capabilities to levels" })
  .superRefine((permissions, ctx) => {
    const count = Object.keys(permissions).length;
    if (count > MAX_PERMISSION_CAPABILITIES) {
      ctx.addIssue({ code: "custom", message: `at most ${MAX_PERMISSION_CAPABILITIES} capabilities (got ${count})` });
    }
    const bytes = new TextEncoder().encode(JSON.stringify(permissions)).length;
    if (bytes > MAX_PERMISSIONS_BYTES) {
      ctx.addIssue({ code: "custom", message: `must be at most ${MAX_PERMISSIONS_BYTES} bytes of JSON (got ${bytes})` });
    }
  });
export type ContactPermissions = z.infer<typeof ContactPermissions>;

/** A request id in a JSON body: a number, or the same number as a string. */
const RequestId = z.union(
  [
    Id,
    z
      .string()
      .regex(/^[1-9][0-9]{0,15}$/)
      .transform(Number),
  ],
  { error: "must be a request id (a positive number)" },
);

export const NetworkRequestSummary = z.object({
  requestId: z.number().int(),
  type: ContactRequestType,
  createdAt: Timestamp,
});

export const ContactDirection = z.enum(["mutual", "inbound", "outbound"]);

export const NetworkContact = z.object({
  userId: z.string(),
  name: z.string(),
  username: z.string(),
  direction: ContactDirection.describe(
    "mutual: friends, or agent access both ways; outbound: only they gave you agent access (your agent can reach them); inbound: only you gave them agent access",
  ),
  friend: z.boolean().describe("whether you are contacts (an accepted friend request)"),
  theirPermissionsToYou: ContactPermissions.nullable().describe("what your agent may reach of theirs; null: no agent access"),
  yourPermissionsToThem: ContactPermissions.nullable().describe("what their agent may reach of yours; null: no agent access"),
  since: Timestamp.describe("when the oldest of these connections was made"),
});
export type NetworkContact = z.infer<typeof NetworkContact>;

const NetworkOverview = success({
  network: z.object({
    shareLinks: z.array(z.record(z.string(), z.unknown())).describe("your live share links, as GET /os/share/list shows them"),
    visitors: z
      .array(z.record(z.string(), z.unknown()))
      .describe(
        "recent visitors of your links, one per visitor and link: sessionId (their latest), shareToken, linkLabel, fingerprint, guestName, username, sessions, messages, lastActiveAt",
      ),
    contacts: z.array(NetworkContact),
    summary: z.object({
      totalLinks: z.number().int(),
      activeLinks: z.number().int(),
      totalVisitors: z.number().int(),
      totalConversations: z.number().int(),
      totalMessages: z.number().int(),
      totalContacts: z.number().int(),
      mutual: z.number().int(),
      inbound: z.number().int(),
      outbound: z.number().int(),
    }),
  }),
});

const ContactParams = z.object({ userId: IdParam.describe("the contact's user id (principal id)") });

export const networkRoutes = {
  networkRequest: defineRoute({
    method: "POST",
    path: "/network/request",
    category: "network",
    summary: "Ask someone for contact ('bob') or for agent access ('bob_coo')",
    auth: "user",
    scope: "os.network:write",
    successStatuses: [201],
    body: z.object({
      to: z
        .string({ error: "is required: a username, or <username>_coo for agent access" })
        .trim()
        .min(1, { error: "must not be empty" })
        .max(128, { error: "is too long" }),
    }),
    response: success({
      requestId: z.number().int(),
      type: ContactRequestType,
      status: z.enum(["pending", "accepted"]).describe("accepted when they had already asked you to be contacts"),
      to: NetworkPerson,
      message: z.string(),
    }),
  }),
  networkListRequests: defineRoute({
    method: "GET",
    path: "/network/requests",
    category: "network",
    summary: "Pending handshake requests, to you (incoming) and from you (outgoing), newest first",
    auth: "user",
    scope: "os.network:read",
    response: success({
      incoming: z.array(NetworkRequestSummary.extend({ from: NetworkPerson })),
      outgoing: z.array(NetworkRequestSummary.extend({ to: NetworkPerson })),
    }),
  }),
  networkAccept: defineRoute({
    method: "POST",
    path: "/network/accept",
    category: "network",
    summary: "Accept or decline a request sent to you; for agent requests, set what the requester's agent may reach",
    auth: "user",
    scope: "os.network:write",
    body: z.object({
      requestId: RequestId,
      type: ContactRequestType,
      action: z.enum(["accept", "decline"]),
      permissions: ContactPermissions.nullable()
        .optional()
        .describe("agent requests only: capability → level; omitted or null gives {} (access with no capabilities)"),
    }),
    response: success({
      requestId: z.number().int(),
      type: ContactRequestType,
      status: z.enum(["accepted", "declined"]),
      from: NetworkPerson,
      permissions: ContactPermissions.optional().describe("on an accepted agent request: what you gave"),
      message: z.string(),
    }),
  }),
  networkWithdrawRequest: defineRoute({
    method: "DELETE",
    path: "/network/requests/:requestId",
    category: "network",
    summary: "Withdraw a pending request you sent",
    auth: "user",
    scope: "os.network:write",
    params: z.object({ requestId: IdParam }),
    response: success({
      requestId: z.number().int(),
      type: ContactRequestType,
      status: z.literal("withdrawn"),
      message: z.string(),
    }),
  }),
  networkOverview: defineRoute({
    method: "GET",
    path: "/network",
    category: "network",
    summary: "Your network: contacts with direction and permissions both ways, share links and visitors",
    auth: "user",
    scope: "os.network:read",
    response: NetworkOverview,
  }),
  osNetworkOverview: defineRoute({
    method: "GET",
    path: "/os/network",
    category: "network",
    summary: "The same as GET /network",
    auth: "user",
    scope: "os.network:read",
    response: NetworkOverview,
  }),
  networkUpdatePermissions: defineRoute({
    method: "PUT",
    path: "/network/contacts/:userId/permissions",
    category: "network",
    summary: "Replace what a contact's agent may reach of yours (they must already have agent access)",
    auth: "user",
    scope: "os.network:write",
    params: ContactParams,
    body: z.object({ permissions: ContactPermissions }),
    response: success({
      userId: z.string(),
      permissions: ContactPermissions,
      updatedAt: Timestamp,
      message: z.string(),
    }),
  }),
  networkWithdrawPermissions: defineRoute({
    method: "DELETE",
    path: "/network/contacts/:userId/permissions",
    category: "network",
    summary: "Withdraw a contact's agent access; their grants to you end at once",
    auth: "user",
    scope: "os.network:write",
    params: ContactParams,
    response: success({
      userId: z.string(),
      grantsEnded: z.number().int().describe("grants from them to you that this ended"),
      message: z.string(),
    }),
  }),
  networkRemoveContact: defineRoute({
    method: "DELETE",
    path: "/network/contacts/:userId",
    category: "network",
    summary: "Stop being contacts (friends); agent permissions are withdrawn separately",
    auth: "user",
    scope: "os.network:write",
    params: ContactParams,
    response: success({ userId: z.string(), message: z.string() }),
  }),
} as const;
