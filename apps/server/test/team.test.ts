import type { Scope } from "@tandem/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiKey } from "../src/auth/api-keys";
import { setTeamSeats, UNLIMITED_SEATS } from "../src/people/team/team-service";
import { createUser } from "../src/people/users/users-service";
import { call, ok, storages } from "./delegation-fixture";
import { startTestServer, type TestServer } from "./harness";

interface Member {
  userId: number;
  username: string;
  name: string;
  email: string | null;
  role: string;
  joinedAt: string;
}
interface Invite {
  id: string;
  role: string;
  email: string | null;
  invitedBy: { userId: number; username: string };
  createdAt: string;
  expiresAt: string;
}
interface TeamAnswer {
  success: true;
  hasTeam: boolean;
  role: string | null;
  canInvite: boolean;
  team: { name: string; seats: number | null; seatsUsed: number; seatsAvailable: number | null } | null;
  members: Member[];
  pendingInvites: Invite[];
}
interface InviteAnswer {
  inviteUrl: string;
  token: string;
  emailDelivered: boolean;
  invite: Invite;
  message: string;
}
interface Person {
  userId: number;
  username: string;
  apiKey: string;
}

const TEAM_SCOPES: Scope[] = ["os.team:read", "os.team:write", "os.notes:read"];

describe.each(storages("team suite"))("the team (%s)", (storage) => {
  let t: TestServer;
  let owner: Person;
  let serial = 0;

  /** A new account (with an email when given) and a key with the team scopes. */
  async function person(name: string, email: string | null = null, scopes: readonly Scope[] = TEAM_SCOPES): Promise<Person> {
    const { db } = t.server.context;
    const user = await createUser(db, { username: `${name}${++serial}`, email });
    const key = await createApiKey(db, { userId: user.id, scopes });
    return { userId: user.id, username: user.username, apiKey: key.apiKey };
  }
  const team = (who: Person) => ok<TeamAnswer>(t, who.apiKey, "GET", "/os/team");
  const invite = (who: Person, body: Record<string, unknown> = {}) =>
    call<InviteAnswer & { error?: string }>(t, who.apiKey, "POST", "/os/team/invite", body);
  const accept = (who: Person, token: string) =>
    call<{ role?: string; error?: string; message: string }>(t, who.apiKey, "POST", "/os/team/accept", { token });
  const seats = (n: number | null) => setTeamSeats(t.server.context.db, n, new Date().toISOString());
  /** A new member with the given role, invited by the owner. */
  async function member(name: string, role: "admin" | "member" = "member"): Promise<Person> {
    const who = await person(name);
    const sent = await invite(owner, { role });
    expect(sent.status).toBe(201);
    expect((await accept(who, sent.body.token)).status).toBe(200);
    return who;
  }

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    owner = await person("owner", "owner@example.com");
  });
  afterAll(() => t?.stop());
  // Each test starts with every inviter's budget of 20 a minute full again.
  beforeEach(() => t.server.context.clock.advance(60_000));

  it("makes the server's first account the owner, once however many look at the same time, with unlimited seats by default", async () => {
    const others = await Promise.all([1, 2, 3].map((i) => person(`early${i}-`)));
    const first = await Promise.all([owner, ...others, owner, ...others].map((who) => team(who)));
    expect(first.filter((a) => a.role === "owner")).toHaveLength(2);
    expect(first.filter((a) => a.hasTeam === false)).toHaveLength(6);
    const owners = await t.server.context.db.selectFrom("team_members").select(["user_id", "role"]).execute();
    expect(owners).toEqual([{ user_id: owner.userId, role: "owner" }]);
    const answer = await team(owner);
    expect(answer).toMatchObject({ success: true, hasTeam: true, role: "owner", canInvite: true });
    expect(answer.team).toMatchObject({ name: "Team", seats: null, seatsAvailable: null });
    expect(answer.members[0]).toMatchObject({ userId: owner.userId, role: "owner", email: "owner@example.com" });
  });

  it("shows someone not on the team nothing, and refuses them everything (404 for the team's objects)", async () => {
    const stranger = await person("stranger");
    expect(await team(stranger)).toEqual({
      success: true,
      hasTeam: false,
      role: null,
      canInvite: false,
      team: null,
      members: [],
      pendingInvites: [],
    });
    const refused = await invite(stranger);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("team_role_required");
    const remove = await call(t, stranger.apiKey, "DELETE", `/os/team/members/${owner.userId}`);
    expect([remove.status, remove.body.error]).toEqual([404, "team_not_found"]);
    const revoke = await call(t, stranger.apiKey, "DELETE", "/os/team/invites/AAAAAAAAAAAA");
    expect([revoke.status, revoke.body.error]).toEqual([404, "team_not_found"]);
    const role = await call(t, stranger.apiKey, "PATCH", `/os/team/members/${owner.userId}`, { role: "member" });
    expect([role.status, role.body.error]).toEqual([404, "team_not_found"]);
  });

  it("lets members of the team message each other without a handshake; others' messages are held as requests", async () => {
    const [ann, ben, outsider] = [await member("ann"), await member("ben"), await person("outsider")];
    const send = (from: Person, to: Person, message: string) =>
      call<{ conversationId: number; delivered: boolean }>(t, from.apiKey, "POST", "/agent/message", { to: to.username, message });
    const inbox = async (who: Person) =>
      (await ok<{ conversations: { messages: { content: string }[] }[] }>(t, who.apiKey, "GET", "/conversations?view=coo")).conversations;
    const requests = async (who: Person) =>
      (await ok<{ requests: { from: { username: string } }[] }>(t, who.apiKey, "GET", "/conversations/requests")).requests;
    const sent = await send(ann, ben, "Standup moved to 10");
    expect([sent.status, sent.body.delivered]).toEqual([200, true]);
    expect((await inbox(ben)).map((c) => c.messages.map((m) => m.content))).toEqual([["Standup moved to 10"]]);
    expect(await requests(ben)).toEqual([]);
    // Writing as himself in their conversation works too, as it does between contacts.
    const reply = await call(t, ben.apiKey, "POST", `/conversations/${sent.body.conversationId}/messages`, { content: "Thanks" });
    expect(reply.status).toBe(201);
    // Someone not on the team reaches ben only as a request.
    expect((await send(outsider, ben, "Hello from outside")).status).toBe(200);
    expect((await requests(ben)).map((r) => r.from.username)).toEqual([outsider.username]);
    // Membership is read on every message: once ann is removed, hers are requests as well.
    expect((await call(t, owner.apiKey, "DELETE", `/os/team/members/${ann.userId}`)).status).toBe(200);
    expect((await send(ann, ben, "Still there?")).status).toBe(200);
    expect((await requests(ben)).map((r) => r.from.username).sort()).toEqual([ann.username, outsider.username].sort());
    expect((await inbox(ben))[0]?.messages.map((m) => m.content)).toEqual(["Standup moved to 10", "Thanks"]);
  });

  it("invites with a single-use link whose token is stored only as a hash", async () => {
    const sent = await invite(owner);
    expect(sent.status).toBe(201);
    const { inviteUrl, token, emailDelivered, invite: created } = sent.body;
    expect(token).toMatch(/^svc_inv_[0-9A-Za-z]{44}$/);
    expect(inviteUrl).toBe(`${t.server.url}/api/v1/os/team/join#${token}`);
    expect(emailDelivered).toBe(false);
    expect(created).toMatchObject({ role: "member", email: null, invitedBy: { userId: owner.userId } });
    expect(token.slice(8, 20)).toBe(created.id);
    const row = await t.server.context.db.selectFrom("team_invites").selectAll().where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(token.slice(20));

    const before = await team(owner);
    expect(before.pendingInvites.map((i) => i.id)).toContain(created.id);
    expect(JSON.stringify(before)).not.toContain(token.slice(20));

    const bob = await person("bob", "bob@example.com");
    const joined = await accept(bob, token);
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ success: true, role: "member", team: { name: "Team" } });
    const asBob = await team(bob);
    expect(asBob).toMatchObject({ hasTeam: true, role: "member", canInvite: false, pendingInvites: [] });
    // Members see who is on the team, not their emails.
    expect(asBob.members.every((m) => m.email === null)).toBe(true);
    expect((await team(owner)).members.find((m) => m.userId === bob.userId)?.email).toBe("bob@example.com");

    const carol = await person("carol");
    const reused = await accept(carol, token);
    expect([reused.status, reused.body.error]).toEqual([409, "invite_already_used"]);
    const again = await invite(owner);
    const twice = await accept(bob, again.body.token);
    expect([twice.status, twice.body.error]).toEqual([409, "already_member"]);
    await call(t, owner.apiKey, "DELETE", `/os/team/invites/${again.body.invite.id}`);
  });

  it("refuses forged, tampered and malformed tokens alike (404)", async () => {
    const sent = await invite(owner);
    const { token } = sent.body;
    const carol = await person("carol");
    const last = token.at(-1) === "A" ? "B" : "A";
    for (const forged of [`${token.slice(0, -1)}${last}`, "svc_inv_short", `svc_sk_${token.slice(8)}`, "x".repeat(128)]) {
      const answer = await accept(carol, forged);
      expect([answer.status, answer.body.error], forged).toEqual([404, "invite_not_found"]);
    }
    const tooLong = await accept(carol, "x".repeat(129));
    expect(tooLong.status).toBe(400);
    const missing = await call(t, carol.apiKey, "POST", "/os/team/accept", {});
    expect(missing.status).toBe(400);
    // The real one still works: a wrong guess uses nothing up.
    expect((await accept(carol, token)).status).toBe(200);
  });

  it("lets only the owner and admins invite, revoke, remove and change roles (403 for members)", async () => {
    const plain = await member("plain");
    const other = await member("other");
    const refused = await invite(plain);
    expect([refused.status, refused.body.error]).toEqual([403, "team_role_required"]);
    const pendingId = (await invite(owner)).body.invite.id;
    for (const [method, path, body] of [
      ["DELETE", `/os/team/invites/${pendingId}`, undefined],
      ["DELETE", `/os/team/members/${other.userId}`, undefined],
      ["PATCH", `/os/team/members/${other.userId}`, { role: "admin" }],
    ] as const) {
      const answer = await call(t, plain.apiKey, method, path, body);
      expect([answer.status, answer.body.error], `${method} ${path}`).toEqual([403, "team_role_required"]);
    }
    expect((await team(owner)).members.some((m) => m.userId === other.userId)).toBe(true);
  });

  it("needs os.team:read to look and os.team:write to invite", async () => {
    const noTeamScope = await person("noscope", null, ["os.notes:read"]);
    expect((await call(t, noTeamScope.apiKey, "GET", "/os/team")).body).toMatchObject({ error: "insufficient_scope" });
    const { db } = t.server.context;
    const readOnly = await createApiKey(db, { userId: owner.userId, scopes: ["os.team:read"] });
    const answer = await call(t, readOnly.apiKey, "POST", "/os/team/invite", {});
    expect([answer.status, answer.body.error]).toEqual([403, "insufficient_scope"]);
    expect((await call(t, null, "GET", "/os/team")).status).toBe(401);
  });

  it("binds an invite to an email: only the account with it may accept", async () => {
    const sent = await invite(owner, { email: "  Dana@Example.COM " });
    expect(sent.status).toBe(201);
    expect(sent.body.invite.email).toBe("dana@example.com");
    const duplicate = await invite(owner, { email: "dana@example.com" });
    expect([duplicate.status, duplicate.body.error]).toEqual([409, "already_invited"]);
    const memberEmail = await invite(owner, { email: "OWNER@example.com" });
    expect([memberEmail.status, memberEmail.body.error]).toEqual([409, "already_member"]);
    const badEmail = await invite(owner, { email: "not an email" });
    expect(badEmail.status).toBe(400);
    const blank = await invite(owner, { email: "" });
    expect(blank.body.invite.email).toBeNull();
    await call(t, owner.apiKey, "DELETE", `/os/team/invites/${blank.body.invite.id}`);

    const noEmail = await person("eve");
    const otherEmail = await person("mallory", "mallory@example.com");
    for (const wrong of [noEmail, otherEmail]) {
      const answer = await accept(wrong, sent.body.token);
      expect([answer.status, answer.body.error]).toEqual([403, "invite_email_mismatch"]);
    }
    const dana = await person("dana", "dana@example.com");
    expect((await accept(dana, sent.body.token)).body).toMatchObject({ role: "member" });
  });

  it("expires invites, which then hold no seat", async () => {
    const sent = await invite(owner, { expiresIn: "1h" });
    const before = (await team(owner)).team?.seatsUsed ?? 0;
    t.server.context.clock.advance(61 * 60_000);
    const late = await accept(await person("late"), sent.body.token);
    expect([late.status, late.body.error]).toEqual([410, "invite_expired"]);
    const after = await team(owner);
    expect(after.team?.seatsUsed).toBe(before - 1);
    expect(after.pendingInvites.some((i) => i.id === sent.body.invite.id)).toBe(false);
  });

  it("revokes an invite: its link stops working at once", async () => {
    const sent = await invite(owner);
    const revoked = await call(t, owner.apiKey, "DELETE", `/os/team/invites/${sent.body.invite.id}`);
    expect(revoked.status).toBe(200);
    const answer = await accept(await person("frank"), sent.body.token);
    expect([answer.status, answer.body.error]).toEqual([404, "invite_not_found"]);
    const twice = await call(t, owner.apiKey, "DELETE", `/os/team/invites/${sent.body.invite.id}`);
    expect([twice.status, twice.body.error]).toEqual([404, "invite_not_found"]);
    expect((await call(t, owner.apiKey, "DELETE", "/os/team/invites/bad")).status).toBe(400);
  });

  it("gives admins inviting and removing members, and the owner alone roles and admins", async () => {
    const admin = await member("admin", "admin");
    expect(await team(admin)).toMatchObject({ role: "admin", canInvite: true });
    const adminInvite = await invite(admin, { role: "admin" });
    expect(adminInvite.status).toBe(201);
    const second = await person("second");
    await accept(second, adminInvite.body.token);

    const plain = await member("plain");
    expect((await call(t, admin.apiKey, "DELETE", `/os/team/members/${second.userId}`)).body).toMatchObject({
      error: "team_role_required",
    });
    expect((await call(t, admin.apiKey, "DELETE", `/os/team/members/${owner.userId}`)).body).toMatchObject({ error: "team_role_required" });
    expect((await call(t, admin.apiKey, "PATCH", `/os/team/members/${plain.userId}`, { role: "admin" })).body).toMatchObject({
      error: "team_role_required",
    });
    expect((await call(t, owner.apiKey, "PATCH", `/os/team/members/${owner.userId}`, { role: "member" })).body).toMatchObject({
      error: "team_role_required",
    });
    const owning = await call(t, owner.apiKey, "PATCH", `/os/team/members/${owner.userId}`, { role: "owner" });
    expect(owning.status).toBe(400);
    expect((await call(t, owner.apiKey, "PATCH", "/os/team/members/999999", { role: "admin" })).body).toMatchObject({
      error: "member_not_found",
    });

    // A demoted admin's pending invites stop working with their right to send them.
    const pending = await invite(second);
    const demoted = await call<{ member: Member }>(t, owner.apiKey, "PATCH", `/os/team/members/${second.userId}`, { role: "member" });
    expect(demoted.body.member).toMatchObject({ userId: second.userId, role: "member" });
    expect((await accept(await person("late"), pending.body.token)).body).toMatchObject({ error: "invite_not_found" });
    expect((await invite(second)).status).toBe(403);

    const removed = await call(t, admin.apiKey, "DELETE", `/os/team/members/${plain.userId}`);
    expect(removed.body).toMatchObject({ success: true, userId: plain.userId });
    expect((await call(t, owner.apiKey, "DELETE", "/os/team/members/999999")).body).toMatchObject({ error: "member_not_found" });
  });

  it("ends a removed member's team access at once; their account and keys keep their own workspace", async () => {
    const admin = await member("gone", "admin");
    const sent = await invite(admin);
    const removed = await call<{ invitesRevoked: number }>(t, owner.apiKey, "DELETE", `/os/team/members/${admin.userId}`);
    expect(removed.status).toBe(200);
    expect(removed.body.invitesRevoked).toBe(1);
    expect(await team(admin)).toMatchObject({ hasTeam: false, role: null, members: [], pendingInvites: [] });
    expect((await invite(admin)).status).toBe(403);
    expect((await call(t, admin.apiKey, "DELETE", `/os/team/members/${owner.userId}`)).status).toBe(404);
    expect((await accept(await person("heir"), sent.body.token)).body).toMatchObject({ error: "invite_not_found" });
    // The same key still reaches the person's own notes.
    expect((await call(t, admin.apiKey, "GET", "/os/notes")).status).toBe(200);
  });

  it("lets members leave, but not the owner", async () => {
    const leaver = await member("leaver");
    const left = await call<{ message: string }>(t, leaver.apiKey, "DELETE", `/os/team/members/${leaver.userId}`);
    expect(left.body.message).toBe("You left the team");
    expect((await team(leaver)).hasTeam).toBe(false);
    const ownerLeaves = await call(t, owner.apiKey, "DELETE", `/os/team/members/${owner.userId}`);
    expect([ownerLeaves.status, ownerLeaves.body.error]).toEqual([403, "team_role_required"]);
  });

  it("lets exactly one of many concurrent invites take the last seat (the rest 409)", async () => {
    const admin = await member("racer", "admin");
    const used = (await team(owner)).team?.seatsUsed ?? 0;
    await seats(used + 1);
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => invite(i % 2 === 0 ? owner : admin)));
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      const refused = answers.filter((a) => a.status !== 201);
      expect(refused.map((a) => [a.status, a.body.error])).toEqual(refused.map(() => [409, "seats_full"]));
      const view = await team(owner);
      expect(view.team).toMatchObject({ seats: used + 1, seatsUsed: used + 1, seatsAvailable: 0 });

      // Seats lowered under the members: the invite that held the last seat cannot be used.
      const winner = answers.find((a) => a.status === 201) as { body: InviteAnswer };
      await seats(used - 1);
      const late = await accept(await person("seatless"), winner.body.token);
      expect([late.status, late.body.error]).toEqual([409, "seats_full"]);
      await seats(used + 1);
      expect((await accept(await person("seated"), winner.body.token)).status).toBe(200);
    } finally {
      await seats(null);
    }
  });

  it("lets exactly one of many concurrent accepts of one invite join", async () => {
    const sent = await invite(owner);
    const people = await Promise.all([1, 2, 3, 4].map((i) => person(`rush${i}-`)));
    const answers = await Promise.all(people.map((p) => accept(p, sent.body.token)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409 && a.body.error === "invite_already_used")).toHaveLength(3);
  });

  it("limits each inviter to 20 invites a minute (429 with Retry-After)", async () => {
    const admin = await member("busy", "admin");
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await invite(admin));
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const over = await invite(admin);
    expect([over.status, over.body.error]).toEqual([429, "rate_limited"]);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    // Someone else's budget is their own.
    expect((await invite(owner)).status).toBe(201);
  });

  it("takes its seats and name from the CLI, over the configured default", async () => {
    await seats(null);
    const shown = await t.cli(["team", "show"]);
    expect(shown.code).toBe(0);
    const before = JSON.parse(shown.stdout) as { owner: string; seats: number | null; seatsSource: string; members: number };
    expect(before).toMatchObject({ owner: owner.username, seats: null, seatsSource: "default" });

    const used = (await team(owner)).team?.seatsUsed ?? 0;
    const set = await t.cli(["team", "seats", String(used + 5)]);
    expect(set.code).toBe(0);
    // (The CLI goes by the real clock, which this suite's server has overtaken: only its own sums are compared.)
    const cliView = JSON.parse(set.stdout) as { seats: number; seatsUsed: number; seatsAvailable: number; seatsSource: string };
    expect(cliView).toMatchObject({ seats: used + 5, seatsSource: "set", seatsAvailable: used + 5 - cliView.seatsUsed });
    expect((await team(owner)).team).toMatchObject({ seats: used + 5, seatsAvailable: 5 });

    const lowered = await t.cli(["team", "seats", "1"]);
    expect(lowered.code).toBe(0);
    expect(lowered.stderr).toContain("warning");
    expect((await invite(owner)).body.error).toBe("seats_full");

    expect((await t.cli(["team", "seats", "0"])).code).toBe(2);
    expect((await t.cli(["team", "seats", "unlimited"])).code).toBe(0);
    expect((await team(owner)).team?.seats).toBeNull();
    const stored = await t.server.context.db.selectFrom("team_settings").select("seats").executeTakeFirstOrThrow();
    expect(stored.seats).toBe(UNLIMITED_SEATS);
    expect((await t.cli(["team", "seats", "default"])).code).toBe(0);

    expect((await t.cli(["team", "name", "Acme", "Research"])).code).toBe(0);
    expect((await team(owner)).team?.name).toBe("Acme Research");
  }, 180_000);

  it("serves the join page without the token ever reaching the server", async () => {
    const page = await t.fetch("/api/v1/os/team/join");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'nonce-");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    expect(html).toContain("location.hash");
    expect(html).toContain('fetch("accept"');
  });

  it("deletes invites a month after they expired (the audit log keeps their story)", async () => {
    const sent = await invite(owner);
    const { db, clock, maintenance } = t.server.context;
    clock.advance(7 * 86_400_000 + 29 * 86_400_000);
    await maintenance.runAll();
    expect(await db.selectFrom("team_invites").select("id").where("id", "=", sent.body.invite.id).executeTakeFirst()).toBeDefined();
    clock.advance(2 * 86_400_000);
    await maintenance.runAll();
    expect(await db.selectFrom("team_invites").select("id").where("id", "=", sent.body.invite.id).executeTakeFirst()).toBeUndefined();
    const audit = await db.selectFrom("audit_log").select("action").where("object_id", "=", sent.body.invite.id).execute();
    expect(audit.map((a) => a.action)).toEqual(["team.invite.create"]);
  });
});
