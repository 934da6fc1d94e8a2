import type { Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { findTool } from "../tools/registry";
import type { runJson } from "./heartbeat-store";

/**
 * A run record carries what the run read and wrote: note bodies, todo titles, memory. Reading the
 * record needs `os.heartbeat:read`, which is not access to those, so each reader sees only what
 * their own scopes would show them: an action's payload and result need the read scope of every
 * area its tool touches (`create_todo` → `os.todos:read`), and the run's message, made from all
 * it read, needs those of every tool the run called. What is held back says what it needs.
 */

type Run = ReturnType<typeof runJson>;
interface Action {
  readonly type: string;
  readonly payload: unknown;
  readonly result: unknown;
}

/** The scope that shows what a tool of `scope` touched: `os.todos:write` → `os.todos:read`. */
const readScopeOf = (scope: Scope): Scope => scope.replace(/:(write|run)$/, ":read") as Scope;

/**
 * What seeing an action of `type` needs. `send_message` (the run's message) is judged with the
 * whole run; a name that is no tool was a refused call, recorded without a payload.
 */
function scopesToSee(type: string): Scope[] {
  const tool = findTool(type);
  return tool ? [...new Set([tool.needs, ...(tool.alsoNeeds ?? [])].map(readScopeOf))] : [];
}

const missingOf = (needed: Iterable<Scope>, reader: ReadonlySet<Scope>) =>
  [...new Set(needed)].filter((scope) => !reader.has(scope)).sort();

const hidden = (missing: readonly Scope[]) => ({ hidden: true, needs: missing });

function seenRun<R extends Run>(run: R, types: readonly string[], reader: ReadonlySet<Scope>): R {
  const missing = missingOf(types.flatMap(scopesToSee), reader);
  if (missing.length === 0) return run;
  const why = `Hidden: reading this run's message needs ${missing.join(", ")}.`;
  return { ...run, text: "", summary: run.status === "failed" ? run.summary : why };
}

/** Runs as `reader`'s scopes may see them (one query for the actions of them all). */
export async function seenRuns<R extends Run>(db: Kysely<Schema>, runs: readonly R[], reader: ReadonlySet<Scope>): Promise<R[]> {
  if (runs.length === 0) return [];
  const rows = await db
    .selectFrom("heartbeat_actions")
    .select(["run_id", "type"])
    .where(
      "run_id",
      "in",
      runs.map((run) => run.id),
    )
    .execute();
  const types = new Map<number, string[]>();
  for (const row of rows) types.set(Number(row.run_id), [...(types.get(Number(row.run_id)) ?? []), row.type]);
  return runs.map((run) => seenRun(run, types.get(run.id) ?? [], reader));
}

/** A run with its actions as `reader`'s scopes may see them. */
export function seenRunDetail<R extends Run, A extends Action>(run: R, actions: readonly A[], reader: ReadonlySet<Scope>) {
  const types = actions.map((action) => action.type);
  const runMissing = missingOf(types.flatMap(scopesToSee), reader);
  return {
    run: seenRun(run, types, reader),
    actions: actions.map((action) => {
      if (action.type === "send_message") return runMissing.length === 0 ? action : { ...action, payload: hidden(runMissing) };
      const missing = missingOf(scopesToSee(action.type), reader);
      return missing.length === 0 ? action : { ...action, payload: hidden(missing), result: hidden(missing) };
    }),
  };
}
