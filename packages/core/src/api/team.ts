import { z } from "zod";
import { IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** A member's role: one owner (the server's first account), admins who may invite, members. */
export const TeamRole = z.enum(["owner", "admin", "member"]);
export type TeamRole = z.infer<typeof TeamRole>;

/** The roles an invite or a role change may give: ownership is never handed out by a link. */
export const GrantableTeamRole = z.enum(["admin", "member"]);

/** How long an invite stays valid. */
export const INVITE_LIFETIMES = { "1h": 3_600_000, "24h": 86_400_000, "7d": 604_800_000, "30d": 2_592_000_000 } as const;
export const InviteLifetime = z.enum(["1h", "24h", "7d", "30d"]);

export const TeamMember = z.object({
  userId: z.number().int(),
  username: z.string(),
  name: z.string().describe("the display name; the username when none is set"),
  email: z.string().nullable().describe("shown to the owner and admins; null for members, and when the account has none"),
  role: TeamRole,
  joinedAt: Timestamp,
});

export const TeamInvite = z.object({
  id: z.string().describe("the invite's public id (never the token)"),
  role: GrantableTeamRole,
  email: z.string().nullable().describe("the only account email that may accept it; null: anyone holding the link"),
  invitedBy: z.object({ userId: z.number().int(), username: z.string() }),
  createdAt: Timestamp,
  expiresAt: Timestamp,
});

const TeamSummary = z.object({
  name: z.string(),
  seats: z.number().int().nullable().describe("null: unlimited"),
  seatsUsed: z.number().int().describe("members plus pending invites (an invite holds its seat until accepted, revoked or expired)"),
  seatsAvailable: z.number().int().nullable().describe("null: unlimited"),
});

/** An email as it binds an invite; compared case-insensitively. */
const InviteEmail = z
  .string()
  .trim()
  .max(254, { error: "is too long" })
  // "" is taken as no email, as some clients send it for an empty field.
  .regex(/^$|^[^\s@]+@[^\s@]+$/, { error: "must be an email address" });

/** `svc_inv_` and 44 base62 characters; anything else cannot be an invite. */
const InviteToken = z.string({ error: "is required: the token from the invite link" }).trim().min(1).max(128);

const MemberParams = z.object({ userId: IdParam.describe("the member's user id") });

export const teamRoutes = {
  getTeam: defineRoute({
    method: "GET",
    path: "/os/team",
    category: "team",
    summary: "The server's team: your role, seats, members and (owner and admins) pending invites",
    auth: "user",
    scope: "os.team:read",
    response: success({
      hasTeam: z.boolean().describe("false when you are not a member (the rest is then empty)"),
      role: TeamRole.nullable(),
      canInvite: z.boolean(),
      team: TeamSummary.nullable(),
      members: z.array(TeamMember),
      pendingInvites: z.array(TeamInvite).describe("owner and admins only; empty for members"),
    }),
  }),
  inviteToTeam: defineRoute({
    method: "POST",
    path: "/os/team/invite",
    category: "team",
    summary: "Invite someone (owner or admin): a single-use link, optionally bound to one email; 409 when seats are full",
    auth: "user",
    scope: "os.team:write",
    successStatuses: [201],
    body: z.object({
      role: GrantableTeamRole.default("member").describe("admin invites need the owner or an admin; default member"),
      email: InviteEmail.nullable().optional().describe("binds the invite: only an account with this email may accept it"),
      expiresIn: InviteLifetime.default("7d"),
    }),
    response: success({
      inviteUrl: z
        .string()
        .describe("the page where the invitee accepts; the token is in its #fragment, never sent to the server by the browser"),
      token: z.string().describe("the invite's secret, shown once; POST it to /os/team/accept"),
      emailDelivered: z.boolean().describe("always false: this server sends no email; pass the link on yourself"),
      invite: TeamInvite,
      message: z.string(),
    }),
  }),
  acceptTeamInvite: defineRoute({
    method: "POST",
    path: "/os/team/accept",
    category: "team",
    summary: "Join the team with an invite token, as the account of the key used",
    auth: "user",
    scope: "os.team:write",
    body: z.object({ token: InviteToken }),
    response: success({
      role: GrantableTeamRole,
      team: z.object({ name: z.string() }),
      message: z.string(),
    }),
  }),
  revokeTeamInvite: defineRoute({
    method: "DELETE",
    path: "/os/team/invites/:inviteId",
    category: "team",
    summary: "Revoke a pending invite (owner or admin); its link stops working at once",
    auth: "user",
    scope: "os.team:write",
    params: z.object({ inviteId: z.string().regex(/^[0-9A-Za-z]{12}$/, { error: "must be an invite id" }) }),
    response: success({ inviteId: z.string(), message: z.string() }),
  }),
  setTeamMemberRole: defineRoute({
    method: "PATCH",
    path: "/os/team/members/:userId",
    category: "team",
    summary: "Make a member an admin or an admin a member (owner only)",
    auth: "user",
    scope: "os.team:write",
    params: MemberParams,
    body: z.object({ role: GrantableTeamRole }),
    response: success({ member: TeamMember, message: z.string() }),
  }),
  removeTeamMember: defineRoute({
    method: "DELETE",
    path: "/os/team/members/:userId",
    category: "team",
    summary: "Remove a member (the owner anyone, an admin members), or leave (your own id); their team access ends at once",
    auth: "user",
    scope: "os.team:write",
    params: MemberParams,
    response: success({ userId: z.number().int(), invitesRevoked: z.number().int(), message: z.string() }),
  }),
  teamJoinPage: defineRoute({
    method: "GET",
    path: "/os/team/join",
    category: "team",
    summary: "The page an inviteUrl opens (HTML): the invitee enters an API key and joins; the token stays in the #fragment",
    auth: "public",
    response: z.string().describe("text/html"),
  }),
} as const;
