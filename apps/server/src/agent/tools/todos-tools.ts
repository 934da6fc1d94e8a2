import { dueDateProblem, todayIn } from "@tandem/core";
import { z } from "zod";
import { completeTodo, createTodo, listTodos } from "../../workspace/todos/todos-service";
import { type AnyAgentTool, defineTool } from "./agent-tool";
import { EntityId, limitOf, Title } from "./tool-inputs";

const listTodosTool = defineTool({
  name: "list_todos",
  namespace: "todos",
  source: "native",
  readWrite: "read",
  needs: "os.todos:read",
  route: "listTodos",
  description:
    "List the user's todos, soonest due first. when: today (due today), overdue (open and due before today), upcoming (due after today) or all; dates are in the user's time zone. Open todos only unless completed is given.",
  input: z.object({
    when: z.enum(["today", "overdue", "upcoming", "all"]).default("all").describe("which due dates"),
    q: z.string().trim().max(200).optional().describe("words that must all appear in the title or description"),
    completed: z.boolean().optional().describe("true for completed todos only; the default is open ones"),
    limit: limitOf(20),
  }),
  async execute(input, context) {
    const { app, grant, timezone } = context;
    const now = new Date();
    const { todos } = await listTodos(
      app.db,
      grant.ownerId,
      {
        q: input.q || undefined,
        date: input.when === "all" ? undefined : input.when,
        timezone,
        completed: input.completed ?? false,
        sort: "dueDate",
        order: "asc",
        limit: input.limit,
        offset: 0,
        includeSteps: false,
      },
      now,
    );
    const today = todayIn(timezone, now);
    return {
      todos: todos.map(({ id, title, dueDate, priority, completed }) => ({
        id,
        title,
        dueDate,
        priority,
        completed,
        overdue: !completed && dueDate !== null && dueDate < today,
      })),
    };
  },
});

const createTodoTool = defineTool({
  name: "create_todo",
  namespace: "todos",
  source: "native",
  readWrite: "write",
  needs: "os.todos:write",
  route: "createTodo",
  description: "Add a todo, optionally with a due date, a priority (1 highest to 4 lowest) and a description.",
  input: z.object({
    title: Title.describe("what to do, in a few words"),
    dueDate: z
      .string()
      .superRefine((value, ctx) => {
        const problem = dueDateProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional()
      .describe("YYYY-MM-DD, in the user's calendar"),
    priority: z.number().int().min(1).max(4).optional().describe("1 (highest) to 4 (lowest)"),
    description: z.string().max(10_000).optional().describe("details"),
  }),
  async execute(input, context) {
    const todo = await createTodo(context.app, context.grant.ownerId, input);
    return { todo: { id: todo.id, title: todo.title, dueDate: todo.dueDate, priority: todo.priority } };
  },
});

const completeTodoTool = defineTool({
  name: "complete_todo",
  namespace: "todos",
  source: "native",
  readWrite: "write",
  needs: "os.todos:write",
  route: "completeTodo",
  description: "Mark a todo done (a done one stays done).",
  input: z.object({ todoId: EntityId.describe("the todo's id, from list_todos") }),
  async execute({ todoId }, context) {
    const todo = await completeTodo(context.app, context.grant.ownerId, todoId);
    return { todo: { id: todo.id, title: todo.title, completed: true as const } };
  },
});

export const TODO_TOOLS: readonly AnyAgentTool[] = [listTodosTool, createTodoTool, completeTodoTool];
