import {
  dueDateProblem,
  MAX_TITLE_LENGTH,
  putTodo,
  readTodos,
  removeTodo,
  TODOS_MAP,
  type TodoMeta,
  type TodoStep,
  titleLengthProblem,
} from "@tandem/core/documents";
import type * as Y from "yjs";

/** The server's REST limits (packages/core/src/api/todos.ts); the app keeps to them so both clients write alike. */
export const TITLE_MAX_LENGTH = MAX_TITLE_LENGTH;
export const DESCRIPTION_MAX_LENGTH = 100_000;
export const STEPS_MAX = 100;

/** What the owner edits in the details panel; completion and steps have their own actions. */
export type TodoEdit = Partial<Pick<TodoMeta, "title" | "description" | "dueDate" | "priority">>;

export interface NewTodo {
  readonly title: string;
  readonly dueDate: string | null;
  readonly priority: number | null;
}

/** A trimmed title within the limit, or an Error saying what is wrong (forms show its message). */
export function cleanTitle(title: string): string {
  const trimmed = title.trim();
  if (!trimmed) throw new Error("A title is required.");
  const tooLong = titleLengthProblem(trimmed);
  if (tooLong) throw new Error(tooLong);
  return trimmed;
}

/** A due date the server accepts, or an Error (a date picker lets a typo such as year 20260 through). */
export function cleanDueDate(dueDate: string | null): string | null {
  const problem = dueDate === null ? null : dueDateProblem(dueDate);
  if (problem) throw new Error(`The due date ${problem}.`);
  return dueDate;
}

/** Creates a todo the way the server's REST API does (every field set), and answers its uuid. */
export function createTodo(doc: Y.Doc, input: NewTodo, now = new Date()): string {
  const uuid = crypto.randomUUID();
  const stamp = now.toISOString();
  const title = cleanTitle(input.title);
  const dueDate = cleanDueDate(input.dueDate);
  doc.transact(() =>
    putTodo(doc, uuid, {
      title,
      description: "",
      dueDate,
      priority: input.priority,
      completed: false,
      completedAt: null,
      steps: [],
      createdAt: stamp,
      updatedAt: stamp,
    }),
  );
  return uuid;
}

/**
 * Applies a change computed from the todo's current state, inside one transaction, and stamps
 * `updatedAt`. A todo deleted meanwhile (here or by another client) stays deleted: `putTodo`
 * would otherwise recreate it with only the changed fields. Answers whether anything was written.
 */
function changeTodo(doc: Y.Doc, uuid: string, change: (current: TodoMeta) => Partial<TodoMeta> | null, now: Date): boolean {
  let changed = false;
  doc.transact(() => {
    if (!doc.getMap(TODOS_MAP).has(uuid)) return;
    const current = readTodos(doc).get(uuid);
    const fields = current ? change(current) : null;
    if (!fields) return;
    putTodo(doc, uuid, { ...fields, updatedAt: now.toISOString() });
    changed = true;
  });
  return changed;
}

/** Writes only the fields given (so another client's concurrent edit of other fields survives). */
export function updateTodo(doc: Y.Doc, uuid: string, edit: TodoEdit, now = new Date()): boolean {
  const fields: TodoEdit = { ...edit };
  if (fields.title !== undefined) fields.title = cleanTitle(fields.title);
  if (fields.dueDate !== undefined) fields.dueDate = cleanDueDate(fields.dueDate);
  if (fields.description !== undefined && fields.description.length > DESCRIPTION_MAX_LENGTH) {
    throw new Error(`A description has at most ${DESCRIPTION_MAX_LENGTH} characters.`);
  }
  return changeTodo(doc, uuid, () => fields, now);
}

/** Completing stamps `completedAt`; reopening clears it. Repeating either changes nothing (like the REST API). */
export function setTodoCompleted(doc: Y.Doc, uuid: string, completed: boolean, now = new Date()): boolean {
  return changeTodo(
    doc,
    uuid,
    (current) => {
      if (current.completed === completed) return null;
      return { completed, completedAt: completed ? now.toISOString() : null };
    },
    now,
  );
}

/**
 * Steps are one value replaced as a whole, so each change is computed from the steps in the
 * document at that moment, never from a copy the view rendered earlier.
 */
function changeSteps(doc: Y.Doc, uuid: string, change: (steps: TodoStep[]) => TodoStep[] | null, now: Date): boolean {
  return changeTodo(
    doc,
    uuid,
    (current) => {
      const steps = change(current.steps);
      return steps ? { steps } : null;
    },
    now,
  );
}

export function addStep(doc: Y.Doc, uuid: string, title: string, now = new Date()): boolean {
  const clean = cleanTitle(title);
  return changeSteps(
    doc,
    uuid,
    (steps) => {
      if (steps.length >= STEPS_MAX) throw new Error(`A todo has at most ${STEPS_MAX} steps.`);
      return [...steps, { title: clean, completed: false }];
    },
    now,
  );
}

/**
 * Which step the owner clicked: its position in the list they saw, and its title. If another client
 * changed the steps meanwhile, the position may have moved; the title finds the step again.
 */
export interface StepRef {
  readonly index: number;
  readonly title: string;
}

function findStep(steps: TodoStep[], ref: StepRef): number {
  return steps[ref.index]?.title === ref.title ? ref.index : steps.findIndex((step) => step.title === ref.title);
}

export function setStepCompleted(doc: Y.Doc, uuid: string, ref: StepRef, completed: boolean, now = new Date()): boolean {
  return changeSteps(
    doc,
    uuid,
    (steps) => {
      const index = findStep(steps, ref);
      if (index < 0 || steps[index]?.completed === completed) return null;
      return steps.map((step, i) => (i === index ? { ...step, completed } : step));
    },
    now,
  );
}

export function removeStep(doc: Y.Doc, uuid: string, ref: StepRef, now = new Date()): boolean {
  return changeSteps(
    doc,
    uuid,
    (steps) => {
      const index = findStep(steps, ref);
      return index < 0 ? null : steps.filter((_, i) => i !== index);
    },
    now,
  );
}

/** Deletes a todo and answers what it was, so the deletion can be undone ({@link restoreTodo}). */
export function deleteTodo(doc: Y.Doc, uuid: string): TodoMeta | undefined {
  const deleted = readTodos(doc).get(uuid);
  doc.transact(() => removeTodo(doc, uuid));
  return deleted;
}

/** Undoes a deletion: the todo comes back under its uuid, as it was. */
export function restoreTodo(doc: Y.Doc, uuid: string, meta: TodoMeta, now = new Date()): void {
  doc.transact(() => putTodo(doc, uuid, { ...meta, updatedAt: now.toISOString() }));
}
