import { randomUUID } from "node:crypto";
import { putTodo, readTodos, removeTodo, type Todo, type TodoMeta, type TodoStep, todayIn, todosDocName } from "@tandem/core";
import { type Kysely, type Selectable, type SelectQueryBuilder, sql } from "kysely";
import { nowIso } from "../../clock";
import type { Schema, TodosTable } from "../../db/schema";
import { notFound } from "../../http/errors";
import type { SyncServer } from "../../sync/sync-server";

type TodoRow = Selectable<TodosTable>;

interface Deps {
  db: Kysely<Schema>;
  sync: SyncServer;
}

export function toTodo(row: TodoRow, includeSteps = true): Todo {
  return {
    id: row.id,
    uuid: row.uuid,
    title: row.title,
    description: row.description,
    dueDate: row.due_date,
    priority: row.priority,
    completed: row.completed === 1,
    completedAt: row.completed_at,
    ...(includeSteps ? { steps: JSON.parse(row.steps) as TodoStep[] } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function getOwnedTodo(db: Kysely<Schema>, ownerId: number, todoId: number): Promise<TodoRow> {
  const row = await db.selectFrom("todos").selectAll().where("id", "=", todoId).where("owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound(`todo ${todoId}`);
  return row;
}

export interface TodoQuery {
  q?: string;
  date?: string;
  timezone: string;
  completed?: boolean;
  priority?: number;
  priorityMin?: number;
  sort: "dueDate" | "priority" | "createdAt" | "updatedAt";
  order: "asc" | "desc";
  limit: number;
  offset: number;
  includeSteps: boolean;
}

const SORT_COLUMNS = { dueDate: "due_date", priority: "priority", createdAt: "created_at", updatedAt: "updated_at" } as const;

/** `%`, `_` and `\` are LIKE's own syntax; escaped, a word matches only itself. */
const likeWord = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function applyFilters<O>(query: SelectQueryBuilder<Schema, "todos", O>, ownerId: number, filters: TodoQuery, now: Date) {
  let q = query.where("owner_id", "=", ownerId);
  for (const word of (filters.q ?? "").toLowerCase().split(/\s+/).filter(Boolean)) {
    q = q.where(sql<boolean>`search_text like ${likeWord(word)} escape '\\'`);
  }
  if (filters.date !== undefined) {
    const today = todayIn(filters.timezone, now);
    if (filters.date === "today") q = q.where("due_date", "=", today);
    else if (filters.date === "overdue") q = q.where("due_date", "<", today).where("completed", "=", 0);
    else if (filters.date === "upcoming") q = q.where("due_date", ">", today);
    else q = q.where("due_date", "=", filters.date);
  }
  if (filters.completed !== undefined) q = q.where("completed", "=", filters.completed ? 1 : 0);
  if (filters.priority !== undefined) q = q.where("priority", "=", filters.priority);
  if (filters.priorityMin !== undefined) q = q.where("priority", "is not", null).where("priority", "<=", filters.priorityMin);
  return q;
}

/** Todos matching the filters, sorted (empty values last in either order) and paged, with the total. */
export async function listTodos(db: Kysely<Schema>, ownerId: number, filters: TodoQuery, now = new Date()) {
  const column = SORT_COLUMNS[filters.sort];
  // The window count gives the total from the same scan as the page: text filters read every row once, not twice.
  const rows = await applyFilters(
    db.selectFrom("todos").selectAll().select(sql<number>`count(*) over ()`.as("total")),
    ownerId,
    filters,
    now,
  )
    .orderBy(sql`case when ${sql.ref(column)} is null then 1 else 0 end`)
    .orderBy(column, filters.order)
    .orderBy("id", filters.order)
    .limit(filters.limit)
    .offset(filters.offset)
    .execute();
  // A page past the end has no row to carry the total; only then is it counted on its own.
  const total =
    rows[0]?.total ??
    (await applyFilters(db.selectFrom("todos").select(sql<number>`count(*)`.as("total")), ownerId, filters, now).executeTakeFirstOrThrow())
      .total;
  return { todos: rows.map((row) => toTodo(row, filters.includeSteps)), total: Number(total) };
}

export async function getTodo(db: Kysely<Schema>, ownerId: number, todoId: number): Promise<Todo> {
  return toTodo(await getOwnedTodo(db, ownerId, todoId));
}

/** A uuid names a todo only within its owner's todos: another user may hold the same one. */
async function readBack(db: Kysely<Schema>, ownerId: number, uuid: string): Promise<Todo> {
  return toTodo(
    await db.selectFrom("todos").selectAll().where("owner_id", "=", ownerId).where("uuid", "=", uuid).executeTakeFirstOrThrow(),
  );
}

export interface TodoFields {
  title?: string;
  description?: string;
  notes?: string;
  dueDate?: string | null;
  priority?: number | null;
  steps?: { title: string; completed: boolean }[];
}

/** The document fields a request sets; `notes` is an older name for `description`. */
function documentFields(input: TodoFields): Partial<TodoMeta> {
  return {
    title: input.title,
    description: input.description ?? input.notes,
    dueDate: input.dueDate,
    priority: input.priority,
    steps: input.steps,
  };
}

export async function createTodo({ db, sync }: Deps, ownerId: number, input: TodoFields & { title: string }): Promise<Todo> {
  const uuid = randomUUID();
  const now = nowIso();
  await sync.change(todosDocName(ownerId), ownerId, (doc) =>
    putTodo(doc, uuid, {
      description: "",
      dueDate: null,
      priority: null,
      steps: [],
      ...Object.fromEntries(Object.entries(documentFields(input)).filter(([, v]) => v !== undefined)),
      completed: false,
      completedAt: null,
      createdAt: now,
      updatedAt: now,
    }),
  );
  return readBack(db, ownerId, uuid);
}

/** Applies a change to one of the user's todos; a todo deleted meanwhile is a 404, never resurrected. */
async function changeTodo({ db, sync }: Deps, ownerId: number, todoId: number, fields: (current: TodoMeta) => Partial<TodoMeta> | null) {
  const row = await getOwnedTodo(db, ownerId, todoId);
  await sync.change(todosDocName(ownerId), ownerId, (doc) => {
    const current = readTodos(doc).get(row.uuid);
    if (!current) throw notFound(`todo ${todoId}`);
    const change = fields(current);
    if (change) putTodo(doc, row.uuid, { ...change, updatedAt: nowIso() });
  });
  return readBack(db, ownerId, row.uuid);
}

export const updateTodo = (deps: Deps, ownerId: number, todoId: number, input: TodoFields) =>
  changeTodo(deps, ownerId, todoId, () => documentFields(input));

/** Idempotent: completing a completed todo changes nothing, and keeps when it was first completed. */
export const completeTodo = (deps: Deps, ownerId: number, todoId: number) =>
  changeTodo(deps, ownerId, todoId, (current) => (current.completed ? null : { completed: true, completedAt: nowIso() }));

export const reopenTodo = (deps: Deps, ownerId: number, todoId: number) =>
  changeTodo(deps, ownerId, todoId, (current) => (current.completed ? { completed: false, completedAt: null } : null));

export async function deleteTodo({ db, sync }: Deps, ownerId: number, todoId: number): Promise<void> {
  const row = await getOwnedTodo(db, ownerId, todoId);
  await sync.change(todosDocName(ownerId), ownerId, (doc) => removeTodo(doc, row.uuid));
}

/** Moves every overdue open todo to today in the caller's time zone; answers them, most important first. */
export async function replanTodos({ db, sync }: Deps, ownerId: number, timezone: string, now = new Date()) {
  const today = todayIn(timezone, now);
  const overdue = await db
    .selectFrom("todos")
    .select(["uuid"])
    .where("owner_id", "=", ownerId)
    .where("completed", "=", 0)
    .where("due_date", "<", today)
    .orderBy(sql`case when priority is null then 1 else 0 end`)
    .orderBy("priority")
    .orderBy("due_date")
    .orderBy("id")
    .execute();
  const uuids = overdue.map((row) => row.uuid);
  if (uuids.length > 0) {
    await sync.change(todosDocName(ownerId), ownerId, (doc) => {
      const current = readTodos(doc);
      const stamp = nowIso();
      for (const uuid of uuids) if (current.has(uuid)) putTodo(doc, uuid, { dueDate: today, updatedAt: stamp });
    });
  }
  const rows = uuids.length
    ? await db.selectFrom("todos").selectAll().where("owner_id", "=", ownerId).where("uuid", "in", uuids).execute()
    : [];
  const byUuid = new Map(rows.map((row) => [row.uuid, row]));
  const moved = uuids.flatMap((uuid) => {
    const row = byUuid.get(uuid);
    return row ? [toTodo(row)] : [];
  });
  return { moved, today };
}
