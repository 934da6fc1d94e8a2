import { countOf, INVITE_LIFETIMES, type TeamRole } from "@tandem/core";
import { type Kysely, sql } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import { issueToken, parseToken, secretMatches } from "../../auth/secret-token";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError, conflict, forbidden } from "../../http/errors";
import { getUser } from "../users/users-service";

/**
 * The server's team (docs/team.md). One per install: the first account is its owner; others join
 * with an invite. Membership is read from the database on every request, so a removal takes
 * effect at once; nothing about it is cached in a credential.
 */

export type Deps = Pick<AppContext, "db" | "database" | "clock" | "config">;
type Db = Kysely<Schema>;

export const INVITE_TOKEN_PREFIX = "svc_inv_";

const RANK: Record<TeamRole, number> = { member: 1, admin: 2, owner: 3 };

const teamRoleRequired = (message: string) => forbidden("team_role_required", message);
const inviteNotFound = () => new ApiError(404, "invite_not_found", "This invite is unknown or was revoked");
const memberNotFound = (userId: number) => new ApiError(404, "member_not_found", `User ${userId} is not on the team`);
/** What a non-member sees of the team's objects: nothing. */
const noTeam = () => new ApiError(404, "team_not_found", "You are not on this server's team");

/**
 * Makes the server's first account the owner if there is none yet. Idempotent and safe to race:
 * the partial unique index on the owner role turns a second insert into nothing.
 */
export async function ensureOwner(db: Db, at: string): Promise<void> {
  // Read first: once there is an owner (every call but the first), looking writes nothing.
  if (await db.selectFrom("team_members").select("user_id").where("role", "=", "owner").executeTakeFirst()) return;
  await db
    .insertInto("team_members")
    .columns(["user_id", "role", "invited_by", "joined_at"])
    .expression((eb) =>
      eb
        .selectFrom("users")
        .select((s) => [
          "users.id",
          s.val<TeamRole>("owner").as("role"),
          s.val<number | null>(null).as("invited_by"),
          s.val(at).as("joined_at"),
        ])
        .where((w) => w.not(w.exists(w.selectFrom("team_members").select("user_id").where("role", "=", "owner"))))
        .orderBy("users.id")
        .limit(1),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/**
 * Serialises membership changes (invites, accepts, removals): on PostgreSQL by locking the team's
 * settings row; SQLite runs one write transaction at a time already. Always the first lock taken.
 */
async function lockTeam(tx: Db, deps: Deps): Promise<void> {
  if (deps.database.dialect === "postgres") await tx.selectFrom("team_settings").select("id").where("id", "=", 1).forUpdate().execute();
}

export interface TeamSettings {
  name: string;
  /** null: unlimited. */
  seats: number | null;
  /** Where `seats` comes from: set with the CLI, or the server's configured default. */
  seatsSource: "set" | "default";
}

/** The stored seats that mean "unlimited", set by the operator over a limited default (real counts are at least 1). */
export const UNLIMITED_SEATS = 0;

export async function teamSettings(db: Db, deps: Pick<Deps, "config">): Promise<TeamSettings> {
  const row = await db.selectFrom("team_settings").select(["name", "seats"]).where("id", "=", 1).executeTakeFirstOrThrow();
  if (row.seats !== null) return { name: row.name, seats: row.seats === UNLIMITED_SEATS ? null : row.seats, seatsSource: "set" };
  const fallback = deps.config.teamSeats;
  return { name: row.name, seats: fallback === "unlimited" ? null : fallback, seatsSource: "default" };
}

async function roleOf(db: Db, userId: number): Promise<TeamRole | undefined> {
  const row = await db.selectFrom("team_members").select("role").where("user_id", "=", userId).executeTakeFirst();
  return row?.role;
}

/** Whether two people are both on the server's team: they reach each other's inbox without a handshake. */
export async function areTeammates(db: Db, a: number, b: number): Promise<boolean> {
  if (a === b) return false;
  const row = await db
    .selectFrom("team_members")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .where("user_id", "in", [a, b])
    .executeTakeFirst();
  return Number(row?.n ?? 0) === 2;
}

/** The caller's role, making the first account owner first if nobody is yet. */
async function callerRole(db: Db, deps: Deps, userId: number): Promise<TeamRole | undefined> {
  await ensureOwner(db, deps.clock.iso());
  return roleOf(db, userId);
}

async function seatCounts(db: Db, now: string): Promise<{ members: number; pendingInvites: number }> {
  const members = await db
    .selectFrom("team_members")
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .executeTakeFirstOrThrow();
  const invites = await pendingInvitesQuery(db, now)
    .select((eb) => eb.fn.countAll<string | number>().as("n"))
    .executeTakeFirstOrThrow();
  return { members: Number(members.n), pendingInvites: Number(invites.n) };
}

function pendingInvitesQuery(db: Db, now: string) {
  return db.selectFrom("team_invites").where("accepted_at", "is", null).where("revoked_at", "is", null).where("expires_at", ">", now);
}

function seatSummary(settings: TeamSettings, counts: { members: number; pendingInvites: number }) {
  const seatsUsed = counts.members + counts.pendingInvites;
  return {
    name: settings.name,
    seats: settings.seats,
    seatsUsed,
    seatsAvailable: settings.seats === null ? null : Math.max(0, settings.seats - seatsUsed),
  };
}

interface MemberRow {
  user_id: number;
  role: TeamRole;
  joined_at: string;
  username: string;
  name: string | null;
  email: string | null;
}

function membersQuery(db: Db) {
  return db
    .selectFrom("team_members")
    .innerJoin("users", "users.id", "team_members.user_id")
    .select(["team_members.user_id", "team_members.role", "team_members.joined_at", "users.username", "users.name", "users.email"]);
}

function toMember(row: MemberRow, showEmail: boolean) {
  return {
    userId: row.user_id,
    username: row.username,
    name: row.name ?? row.username,
    email: showEmail ? row.email : null,
    role: row.role,
    joinedAt: row.joined_at,
  };
}

const canManage = (role: TeamRole | undefined) => role === "owner" || role === "admin";

/** `GET /os/team`: what the caller may see of the team. */
export async function teamView(deps: Deps, userId: number) {
  const { db } = deps;
  const role = await callerRole(db, deps, userId);
  if (!role) return { hasTeam: false, role: null, canInvite: false, team: null, members: [], pendingInvites: [] };
  const now = deps.clock.iso();
  const [settings, counts, members] = await Promise.all([
    teamSettings(db, deps),
    seatCounts(db, now),
    membersQuery(db).orderBy("team_members.joined_at").orderBy("team_members.user_id").execute(),
  ]);
  const manager = canManage(role);
  const invites = manager
    ? await pendingInvitesQuery(db, now)
        .innerJoin("users", "users.id", "team_invites.invited_by")
        .select([
          "team_invites.id",
          "team_invites.role",
          "team_invites.email",
          "team_invites.invited_by",
          "team_invites.created_at",
          "team_invites.expires_at",
          "users.username",
        ])
        .orderBy("team_invites.created_at", "desc")
        .orderBy("team_invites.id")
        .execute()
    : [];
  return {
    hasTeam: true,
    role,
    canInvite: manager,
    team: seatSummary(settings, counts),
    members: members.map((row) => toMember(row, manager)),
    pendingInvites: invites.map((row) => ({
      id: row.id,
      role: row.role,
      email: row.email,
      invitedBy: { userId: row.invited_by, username: row.username },
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    })),
  };
}

/** Checks that the caller may invite with `role`; answers their role. Runs before the rate limit. */
export async function assertMayInvite(deps: Deps, actor: Principal, role: "admin" | "member"): Promise<void> {
  const mine = await callerRole(deps.db, deps, actor.userId);
  if (!mine) throw teamRoleRequired("Only the team's owner or an admin may invite; you are not on the team");
  if (!canManage(mine)) throw teamRoleRequired("Only the team's owner or an admin may invite; you are a member");
  if (RANK[role] > RANK[mine]) throw teamRoleRequired(`An ${mine} cannot invite an ${role}`);
}

export interface CreatedInvite {
  token: string;
  invite: {
    id: string;
    role: "admin" | "member";
    email: string | null;
    invitedBy: { userId: number; username: string };
    createdAt: string;
    expiresAt: string;
  };
}

/**
 * Creates an invite if a seat is free. The seat count and the insert run under the team lock, so
 * of concurrent invites racing for the last seat exactly one wins and the others get 409.
 */
export async function createInvite(
  deps: Deps,
  actor: Principal,
  input: { role: "admin" | "member"; email?: string | null; expiresIn: keyof typeof INVITE_LIFETIMES },
): Promise<CreatedInvite> {
  const email = input.email ? input.email.trim().toLowerCase() : null;
  return deps.db.transaction().execute(async (tx) => {
    await lockTeam(tx, deps);
    // Again under the lock: a removal or demotion that committed meanwhile wins.
    await assertMayInvite({ ...deps, db: tx }, actor, input.role);
    const now = deps.clock.iso();
    if (email) {
      const member = await membersQuery(tx).where(sql<string>`lower(users.email)`, "=", email).executeTakeFirst();
      if (member) throw conflict("already_member", `${member.username} (${email}) is already on the team`);
      const pending = await pendingInvitesQuery(tx, now).select("id").where("email", "=", email).executeTakeFirst();
      if (pending)
        throw conflict("already_invited", `${email} already has a pending invite (${pending.id}); revoke it first to send another`);
    }
    const settings = await teamSettings(tx, deps);
    const counts = await seatCounts(tx, now);
    if (settings.seats !== null && counts.members + counts.pendingInvites >= settings.seats) {
      throw conflict(
        "seats_full",
        `All ${settings.seats} seats are taken (${countOf(counts.members, "member")}, ${countOf(counts.pendingInvites, "pending invite")}); the operator can add seats with 'tandem-server team seats'`,
      );
    }
    const issued = issueToken(INVITE_TOKEN_PREFIX);
    const expiresAt = deps.clock.isoIn(INVITE_LIFETIMES[input.expiresIn]);
    await tx
      .insertInto("team_invites")
      .values({
        id: issued.id,
        secret_hash: issued.secretHash,
        role: input.role,
        email,
        invited_by: actor.userId,
        created_at: now,
        expires_at: expiresAt,
        accepted_at: null,
        accepted_by: null,
        revoked_at: null,
      })
      .execute();
    await recordAudit(tx, deps.clock, {
      actor,
      action: "team.invite.create",
      objectType: "team_invite",
      objectId: issued.id,
      parties: [actor.userId],
      detail: { role: input.role, emailBound: email !== null, expiresAt },
    });
    return {
      token: issued.token,
      invite: {
        id: issued.id,
        role: input.role,
        email,
        invitedBy: { userId: actor.userId, username: actor.username },
        createdAt: now,
        expiresAt,
      },
    };
  });
}

/**
 * Joins the team with an invite token, as the caller's account: single use, before it expires,
 * and for a bound invite only with the bound email. Under the team lock, so an invite is used
 * once however many accept it at the same moment.
 */
export async function acceptInvite(deps: Deps, actor: Principal, token: string): Promise<{ role: "admin" | "member"; teamName: string }> {
  const parsed = parseToken(INVITE_TOKEN_PREFIX, token);
  if (!parsed) throw inviteNotFound();
  const user = await getUser(deps.db, actor.userId);
  return deps.db.transaction().execute(async (tx) => {
    await lockTeam(tx, deps);
    const now = deps.clock.iso();
    await ensureOwner(tx, now);
    const invite = await tx.selectFrom("team_invites").selectAll().where("id", "=", parsed.id).executeTakeFirst();
    if (!invite || !secretMatches(parsed.secret, invite.secret_hash) || invite.revoked_at !== null) throw inviteNotFound();
    if (invite.accepted_at !== null) throw conflict("invite_already_used", "This invite has been used already; ask for a new one");
    if (invite.expires_at <= now)
      throw new ApiError(410, "invite_expired", `This invite expired at ${invite.expires_at}; ask for a new one`);
    if (invite.email !== null && user.email?.trim().toLowerCase() !== invite.email) {
      throw forbidden(
        "invite_email_mismatch",
        "This invite is for another email address: accept it with the account that has that email (set with 'tandem-server users add --email')",
      );
    }
    if (await roleOf(tx, actor.userId)) throw conflict("already_member", "You are on the team already");
    const settings = await teamSettings(tx, deps);
    const counts = await seatCounts(tx, now);
    // The invite held its own seat; seats lowered since may leave none for it.
    if (settings.seats !== null && counts.members >= settings.seats) {
      throw conflict("seats_full", `All ${settings.seats} seats are taken by members; ask the operator to add seats`);
    }
    await tx
      .insertInto("team_members")
      .values({ user_id: actor.userId, role: invite.role, invited_by: invite.invited_by, joined_at: now })
      .execute();
    await tx.updateTable("team_invites").set({ accepted_at: now, accepted_by: actor.userId }).where("id", "=", invite.id).execute();
    await recordAudit(tx, deps.clock, {
      actor,
      action: "team.invite.accept",
      objectType: "team_invite",
      objectId: invite.id,
      parties: [actor.userId, invite.invited_by],
      detail: { role: invite.role },
    });
    return { role: invite.role, teamName: settings.name };
  });
}

/** Revokes a pending invite; the owner any, an admin any too (invites are the managers' shared work). */
export async function revokeInvite(deps: Deps, actor: Principal, inviteId: string): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    await lockTeam(tx, deps);
    const role = await callerRole(tx, deps, actor.userId);
    if (!role) throw noTeam();
    if (!canManage(role)) throw teamRoleRequired("Only the team's owner or an admin may revoke invites");
    const now = deps.clock.iso();
    const invite = await pendingInvitesQuery(tx, now).select("id").where("id", "=", inviteId).executeTakeFirst();
    if (!invite) throw inviteNotFound();
    await tx.updateTable("team_invites").set({ revoked_at: now }).where("id", "=", inviteId).execute();
    await recordAudit(tx, deps.clock, {
      actor,
      action: "team.invite.revoke",
      objectType: "team_invite",
      objectId: inviteId,
      parties: [actor.userId],
    });
  });
}

/** Revokes the pending invites `userId` sent: once they may no longer invite, their links stop working too. */
async function revokeInvitesBy(tx: Db, userId: number, now: string): Promise<number> {
  const result = await tx
    .updateTable("team_invites")
    .set({ revoked_at: now })
    .where("invited_by", "=", userId)
    .where("accepted_at", "is", null)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The owner makes a member an admin or an admin a member; a demoted admin's pending invites are revoked. */
export async function setMemberRole(deps: Deps, actor: Principal, userId: number, role: "admin" | "member") {
  return deps.db.transaction().execute(async (tx) => {
    await lockTeam(tx, deps);
    const mine = await callerRole(tx, deps, actor.userId);
    if (!mine) throw noTeam();
    if (mine !== "owner") throw teamRoleRequired("Only the team's owner may change roles");
    const target = await membersQuery(tx).where("team_members.user_id", "=", userId).executeTakeFirst();
    if (!target) throw memberNotFound(userId);
    if (target.role === "owner") throw teamRoleRequired("The owner's role cannot be changed");
    const now = deps.clock.iso();
    if (target.role !== role) {
      await tx.updateTable("team_members").set({ role }).where("user_id", "=", userId).execute();
      if (role === "member") await revokeInvitesBy(tx, userId, now);
      await recordAudit(tx, deps.clock, {
        actor,
        action: "team.member.role",
        objectType: "team_member",
        objectId: userId,
        parties: [actor.userId, userId],
        detail: { from: target.role, to: role },
      });
    }
    return toMember({ ...target, role }, true);
  });
}

/**
 * Removes a member, or lets a member leave (their own id). The owner may remove anyone else, an
 * admin only members; the owner cannot leave. The removed person keeps their account, their own
 * workspace and their API keys; what they lose, at once, is the team: its listing, inviting, and
 * their pending invites, which are revoked.
 */
export async function removeMember(deps: Deps, actor: Principal, userId: number): Promise<{ invitesRevoked: number; left: boolean }> {
  return deps.db.transaction().execute(async (tx) => {
    await lockTeam(tx, deps);
    const mine = await callerRole(tx, deps, actor.userId);
    if (!mine) throw noTeam();
    const target = await roleOf(tx, userId);
    if (!target) throw memberNotFound(userId);
    const left = userId === actor.userId;
    if (target === "owner") throw teamRoleRequired("The owner cannot be removed or leave the team");
    if (!left && RANK[mine] <= RANK[target]) {
      throw teamRoleRequired(
        mine === "member" ? "Only the team's owner or an admin may remove members" : "An admin may remove members, not admins",
      );
    }
    const now = deps.clock.iso();
    await tx.deleteFrom("team_members").where("user_id", "=", userId).execute();
    const invitesRevoked = await revokeInvitesBy(tx, userId, now);
    await recordAudit(tx, deps.clock, {
      actor,
      action: left ? "team.member.leave" : "team.member.remove",
      objectType: "team_member",
      objectId: userId,
      parties: [actor.userId, userId],
      detail: { role: target, invitesRevoked },
    });
    return { invitesRevoked, left };
  });
}

/** How long ended invites (expired, and so also every used or revoked one) are kept before maintenance deletes them. */
const INVITE_RETENTION_MS = 30 * 86_400_000;

/** Deletes invites that expired over {@link INVITE_RETENTION_MS} ago; the audit log keeps their story. */
export async function deleteOldInvites(deps: Pick<Deps, "db" | "clock">): Promise<number> {
  const result = await deps.db
    .deleteFrom("team_invites")
    .where("expires_at", "<", deps.clock.isoIn(-INVITE_RETENTION_MS))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** For `tandem-server team show`: the team as the operator sees it. */
export async function operatorTeamView(deps: Pick<Deps, "db" | "clock" | "config">) {
  const now = deps.clock.iso();
  await ensureOwner(deps.db, now);
  const settings = await teamSettings(deps.db, deps);
  const counts = await seatCounts(deps.db, now);
  const members = await membersQuery(deps.db).orderBy("team_members.joined_at").orderBy("team_members.user_id").execute();
  return {
    ...seatSummary(settings, counts),
    seatsSource: settings.seatsSource,
    members: members.length,
    pendingInvites: counts.pendingInvites,
    owner: members.find((m) => m.role === "owner")?.username ?? null,
    memberList: members.map((row) => ({ userId: row.user_id, username: row.username, role: row.role, joinedAt: row.joined_at })),
  };
}

/** For `tandem-server team seats`: a number ({@link UNLIMITED_SEATS}: unlimited), or null to fall back to the configured default. */
export async function setTeamSeats(db: Db, seats: number | null, at: string): Promise<void> {
  await db.updateTable("team_settings").set({ seats, updated_at: at }).where("id", "=", 1).execute();
}

export async function setTeamName(db: Db, name: string, at: string): Promise<void> {
  await db.updateTable("team_settings").set({ name, updated_at: at }).where("id", "=", 1).execute();
}
