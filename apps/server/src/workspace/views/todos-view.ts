import { readTodos, type TodoMeta } from "@tandem/core";
import type { Kysely } from "kysely";
import type * as Y from "yjs";
import type { Schema } from "../../db/schema";

/** The lower-cased text that `q` filters match against. */
export function todoSearchText(todo: Pick<TodoMeta, "title" | "description">): string {
  return `${todo.title}\n${todo.description}`.toLowerCase();
}

function row(todo: TodoMeta) {
  return {
    title: todo.title,
    description: todo.description,
    search_text: todoSearchText(todo),
    due_date: todo.dueDate,
    priority: todo.priority,
    completed: todo.completed ? 1 : 0,
    completed_at: todo.completedAt,
    steps: JSON.stringify(todo.steps),
    created_at: todo.createdAt,
    updated_at: todo.updatedAt,
  };
}

/** Brings one user's todos view in line with their todos document, atomically; ids are assigned on first sight. */
export async function materializeTodos(db: Kysely<Schema>, ownerId: number, doc: Y.Doc): Promise<void> {
  const todos = readTodos(doc);
  await db.transaction().execute(async (tx) => {
    const rows = await tx.selectFrom("todos").selectAll().where("owner_id", "=", ownerId).execute();
    const existing = new Map(rows.map((r) => [r.uuid, r]));
    for (const [uuid, todo] of todos) {
      const wanted = row(todo);
      const current = existing.get(uuid);
      if (!current) {
        await tx
          .insertInto("todos")
          .values({ uuid, owner_id: ownerId, ...wanted })
          .onConflict((oc) => oc.columns(["owner_id", "uuid"]).doNothing())
          .execute();
      } else if ((Object.keys(wanted) as (keyof typeof wanted)[]).some((key) => current[key] !== wanted[key])) {
        await tx.updateTable("todos").set(wanted).where("uuid", "=", uuid).where("owner_id", "=", ownerId).execute();
      }
    }
    const removed = rows.filter((r) => !todos.has(r.uuid)).map((r) => r.uuid);
    if (removed.length > 0) await tx.deleteFrom("todos").where("owner_id", "=", ownerId).where("uuid", "in", removed).execute();
  });
}
