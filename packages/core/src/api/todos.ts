import { z } from "zod";
import { dueDateProblem, isCalendarDate, isTimeZone } from "../dates";
import { MAX_TITLE_LENGTH } from "../documents/limits";
import { IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

export const TodoStepSchema = z.object({ title: z.string().trim().min(1).max(MAX_TITLE_LENGTH), completed: z.boolean().default(false) });

export const Todo = z.object({
  id: z.number().int(),
  uuid: z.string(),
  title: z.string(),
  description: z.string(),
  dueDate: z.string().nullable().describe("YYYY-MM-DD"),
  priority: z.number().int().nullable().describe("1 (highest) to 4 (lowest)"),
  completed: z.boolean(),
  completedAt: Timestamp.nullable(),
  steps: z
    .array(z.object({ title: z.string(), completed: z.boolean() }))
    .optional()
    .describe("with includeSteps=true, and on single todos"),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Todo = z.infer<typeof Todo>;

const DueDate = z
  .string()
  .superRefine((value, ctx) => {
    const problem = dueDateProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .nullable()
  .describe("YYYY-MM-DD; null clears it");
const Priority = z
  .number()
  .int({ error: "must be 1, 2, 3 or 4" })
  .min(1, { error: "must be 1, 2, 3 or 4" })
  .max(4, { error: "must be 1, 2, 3 or 4" })
  .nullable();
const TimeZone = z.string().refine(isTimeZone, { error: "must be an IANA time zone such as Europe/Paris" });
const Title = z.string().trim().min(1, { error: "must not be empty" }).max(MAX_TITLE_LENGTH);
const Description = z.string().max(100_000);
const Steps = z.array(TodoStepSchema).max(100);
const TodoIdParams = z.object({ id: IdParam });
/** What create and update accept; `notes` is an older name for `description`. */
const TodoFields = {
  description: Description.optional(),
  notes: Description.optional(),
  dueDate: DueDate.optional(),
  priority: Priority.optional(),
  steps: Steps.optional(),
};
const TodoResult = success({ result: z.object({ todo: Todo }), message: z.string() });

/** A query-string boolean; the typed client may pass a real one, which it sends as the same text. */
const booleanQuery = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")], { error: "must be true or false" });

export const todoRoutes = {
  listTodos: defineRoute({
    method: "GET",
    path: "/os/todos",
    category: "todos",
    summary: "Todos filtered by text, date (in the caller's time zone), completion and priority; sorted and paged",
    auth: "user",
    scope: "os.todos:read",
    query: z.object({
      q: z.string().trim().max(500).optional().describe("every word must appear in the title or description"),
      date: z
        .string()
        .refine((d) => ["today", "overdue", "upcoming"].includes(d) || isCalendarDate(d), {
          error: "must be today, overdue, upcoming or YYYY-MM-DD",
        })
        .optional(),
      timezone: TimeZone.default("UTC"),
      completed: booleanQuery.optional(),
      priority: z.coerce.number().int().min(1).max(4).optional().describe("exactly this level"),
      priorityMin: z.coerce.number().int().min(1).max(4).optional().describe("levels 1…N: at least this important"),
      sort: z.enum(["dueDate", "priority", "createdAt", "updatedAt"]).default("dueDate"),
      order: z.enum(["asc", "desc"]).default("asc"),
      limit: z.coerce.number().int().min(1).max(200).default(50),
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
      includeSteps: booleanQuery.default(false),
    }),
    response: success({ result: z.object({ todos: z.array(Todo), total: z.number().int() }) }),
  }),
  createTodo: defineRoute({
    method: "POST",
    path: "/os/todos",
    category: "todos",
    summary: "Create a todo (notes is an alias of description)",
    auth: "user",
    scope: "os.todos:write",
    invalidStatus: 422,
    successStatuses: [201],
    body: z.object({ title: Title, ...TodoFields }),
    response: TodoResult,
  }),
  getTodo: defineRoute({
    method: "GET",
    path: "/os/todos/:id",
    category: "todos",
    summary: "One todo with its steps",
    auth: "user",
    scope: "os.todos:read",
    params: TodoIdParams,
    response: success({ result: z.object({ todo: Todo }) }),
  }),
  updateTodo: defineRoute({
    method: "PATCH",
    path: "/os/todos/:id",
    category: "todos",
    summary: "Change a todo's fields; omitted fields are untouched",
    auth: "user",
    scope: "os.todos:write",
    params: TodoIdParams,
    invalidStatus: 422,
    body: z.object({ title: Title.optional(), ...TodoFields }),
    response: TodoResult,
  }),
  completeTodo: defineRoute({
    method: "POST",
    path: "/os/todos/:id/complete",
    category: "todos",
    summary: "Mark a todo completed (again: no change)",
    auth: "user",
    scope: "os.todos:write",
    params: TodoIdParams,
    body: z.object({}).optional(),
    response: TodoResult,
  }),
  reopenTodo: defineRoute({
    method: "POST",
    path: "/os/todos/:id/reopen",
    category: "todos",
    summary: "Mark a completed todo open again",
    auth: "user",
    scope: "os.todos:write",
    params: TodoIdParams,
    body: z.object({}).optional(),
    response: TodoResult,
  }),
  deleteTodo: defineRoute({
    method: "DELETE",
    path: "/os/todos/:id",
    category: "todos",
    summary: "Delete a todo",
    auth: "user",
    scope: "os.todos:write",
    params: TodoIdParams,
    response: success({ message: z.string() }),
  }),
  replanTodos: defineRoute({
    method: "POST",
    path: "/os/todos/replan",
    category: "todos",
    summary: "Move every overdue open todo to today (in the caller's time zone), most important first",
    auth: "user",
    scope: "os.todos:write",
    body: z.object({ timezone: TimeZone.default("UTC") }).optional(),
    response: success({ moved: z.array(Todo), today: z.string(), message: z.string() }),
  }),
} as const;
