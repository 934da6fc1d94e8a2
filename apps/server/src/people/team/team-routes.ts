import { API_BASE_PATH, type teamRoutes } from "@tandem/core";
import type { AppContext } from "../../context";
import { newNonce, pairingPageHeaders } from "../../delegation/runtime/pairing-page";
import { publicOrigin } from "../../delegation/runtime/runtime-routes";
import { tooManyRequests } from "../../http/errors";
import { created } from "../../http/reply";
import { HANDLED, type RouteHandlers } from "../../http/router";
import { renderTeamJoinPage } from "./team-join-page";
import {
  acceptInvite,
  assertMayInvite,
  createInvite,
  deleteOldInvites,
  removeMember,
  revokeInvite,
  setMemberRole,
  teamView,
} from "./team-service";

/** Invites one person may send: 20 a minute (over all instances, like the request rate limit). */
export const INVITES_PER_MINUTE = 20;

export function teamHandlers(context: AppContext): RouteHandlers<keyof typeof teamRoutes> {
  context.maintenance.add("team.invites.cleanup", () => deleteOldInvites(context));
  const invites = context.shared.limiter("team-invites", { perMinute: INVITES_PER_MINUTE, burst: INVITES_PER_MINUTE });
  return {
    getTeam: async ({ principal }) => ({ success: true, ...(await teamView(context, principal.userId)) }),
    inviteToTeam: async ({ input, principal, req }) => {
      // A member's attempt is refused before it can use up the inviter's budget, or tell anything.
      await assertMayInvite(context, principal, input.body.role);
      // Counted per minute of the server's clock (which tests move), each minute its own budget.
      const minute = Math.floor(context.clock.nowMs() / 60_000);
      const retryAfter = await invites.take(`user:${principal.userId}:${minute}`);
      if (retryAfter !== null) throw tooManyRequests(retryAfter);
      const { token, invite } = await createInvite(context, principal, input.body);
      const inviteUrl = `${publicOrigin(context, req)}${API_BASE_PATH}/os/team/join#${token}`;
      return created({
        success: true,
        inviteUrl,
        token,
        emailDelivered: false,
        invite,
        message: `Invite created${invite.email ? ` for ${invite.email}` : ""} as ${invite.role}, valid until ${invite.expiresAt}; send the link yourself (this server sends no email)`,
      });
    },
    acceptTeamInvite: async ({ input, principal }) => {
      const { role, teamName } = await acceptInvite(context, principal, input.body.token);
      return {
        success: true,
        role,
        team: { name: teamName },
        message: `You joined ${teamName} as ${role === "admin" ? "an admin" : "a member"}`,
      };
    },
    revokeTeamInvite: async ({ input, principal }) => {
      await revokeInvite(context, principal, input.params.inviteId);
      return {
        success: true,
        inviteId: input.params.inviteId,
        message: `Invite ${input.params.inviteId} is revoked; its link no longer works`,
      };
    },
    setTeamMemberRole: async ({ input, principal }) => {
      const member = await setMemberRole(context, principal, input.params.userId, input.body.role);
      return { success: true, member, message: `${member.username} is now ${member.role === "admin" ? "an admin" : "a member"}` };
    },
    removeTeamMember: async ({ input, principal }) => {
      const { userId } = input.params;
      const { invitesRevoked, left } = await removeMember(context, principal, userId);
      return {
        success: true,
        userId,
        invitesRevoked,
        message: left ? "You left the team" : `User ${userId} is no longer on the team`,
      };
    },
    teamJoinPage: ({ res }) => {
      const nonce = newNonce();
      res.status(200).set(pairingPageHeaders(nonce)).send(renderTeamJoinPage(nonce));
      return HANDLED;
    },
  };
}
