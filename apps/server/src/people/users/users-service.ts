import { usernameProblem } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { isAgentHandle } from "../../agent/managed-agents/managed-agent-store";
import { nowIso } from "../../clock";
import type { Schema, UsersTable } from "../../db/schema";
import { badRequest, conflict, notFound } from "../../http/errors";

export interface User {
  id: number;
  username: string;
  name: string | null;
  email: string | null;
  createdAt: string;
}

function toUser(row: Selectable<UsersTable>): User {
  return { id: row.id, username: row.username, name: row.name, email: row.email, createdAt: row.created_at };
}

export async function createUser(
  db: Kysely<Schema>,
  input: { username: string; name?: string | null; email?: string | null },
): Promise<User> {
  const username = input.username.trim().toLowerCase();
  const problem = usernameProblem(username);
  if (problem) throw badRequest("invalid_username", `username ${problem}`);
  // Usernames and managed agents' handles share one space (`POST /agent/message {to}` takes both).
  if (await isAgentHandle(db, username)) throw conflict("username_taken", `username "${username}" is already taken`);
  const createdAt = nowIso();
  const inserted = await db
    .insertInto("users")
    .values({ username, name: input.name ?? null, email: input.email ?? null, created_at: createdAt })
    .onConflict((oc) => oc.column("username").doNothing())
    .returning("id")
    .executeTakeFirst();
  if (!inserted) throw conflict("username_taken", `username "${username}" is already taken`);
  return { id: inserted.id, username, name: input.name ?? null, email: input.email ?? null, createdAt };
}

export async function findUserByUsername(db: Kysely<Schema>, username: string): Promise<User | undefined> {
  const row = await db.selectFrom("users").selectAll().where("username", "=", username.trim().toLowerCase()).executeTakeFirst();
  return row ? toUser(row) : undefined;
}

export async function getUser(db: Kysely<Schema>, id: number): Promise<User> {
  const row = await db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`user ${id}`);
  return toUser(row);
}

export async function requireUserByUsername(db: Kysely<Schema>, username: string): Promise<User> {
  const user = await findUserByUsername(db, username);
  if (!user) throw notFound(`user "${username}"`);
  return user;
}
