import type { AppContext } from "../../context";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { completeTodo, createTodo, deleteTodo, getTodo, listTodos, reopenTodo, replanTodos, updateTodo } from "./todos-service";

type TodoRouteId = "listTodos" | "createTodo" | "getTodo" | "updateTodo" | "completeTodo" | "reopenTodo" | "deleteTodo" | "replanTodos";

export function todoHandlers(context: AppContext): RouteHandlers<TodoRouteId> {
  const { db } = context;
  return {
    listTodos: async ({ input, principal }) => ({ success: true, result: await listTodos(db, principal.userId, input.query) }),
    createTodo: async ({ input, principal }) => {
      const todo = await createTodo(context, principal.userId, input.body);
      return created({ success: true, result: { todo }, message: `Created todo "${todo.title}"` });
    },
    getTodo: async ({ input, principal }) => ({ success: true, result: { todo: await getTodo(db, principal.userId, input.params.id) } }),
    updateTodo: async ({ input, principal }) => ({
      success: true,
      result: { todo: await updateTodo(context, principal.userId, input.params.id, input.body) },
      message: "Todo updated",
    }),
    completeTodo: async ({ input, principal }) => ({
      success: true,
      result: { todo: await completeTodo(context, principal.userId, input.params.id) },
      message: "Todo completed",
    }),
    reopenTodo: async ({ input, principal }) => ({
      success: true,
      result: { todo: await reopenTodo(context, principal.userId, input.params.id) },
      message: "Todo reopened",
    }),
    deleteTodo: async ({ input, principal }) => {
      await deleteTodo(context, principal.userId, input.params.id);
      return { success: true, message: "Todo deleted" };
    },
    replanTodos: async ({ input, principal }) => {
      const { moved, today } = await replanTodos(context, principal.userId, input.body?.timezone ?? "UTC");
      return { success: true, moved, today, message: `Moved ${moved.length} overdue todo${moved.length === 1 ? "" : "s"} to ${today}` };
    },
  };
}
