import { clip } from "../../../workspace/notes/extractive-summary";
import { checklistOf, HEARTBEAT_PREFIX } from "../../prompt/heartbeat-request";
import { parseTodoRequest, type TodoRequest } from "./local-todo-request";
import type { LocalAction, LocalTurn, ToolCallPlan, ToolExchange } from "./local-turn";

/**
 * The `local` model's heartbeat pass. It reads the todos (overdue, due today, and all open ones
 * for the high-priority ones), and on a tier that may write it adds the todos the checklist asks
 * for ("add a todo: …", "remind me to …") unless an open todo of that title exists, so running
 * every hour never adds one twice. Then it writes one short message, even when all is well.
 */

/** Todos listed per section of the message, and checklist lines acted on per run. */
const SHOWN_PER_SECTION = 5;
const MAX_CHECKLIST_TODOS = 5;
/** Priorities 1 and 2 (of 1–4) count as high. */
const HIGH_PRIORITY = 2;
const OPEN_TODOS_READ = 50;

const MENTIONS_EMAIL_OR_CALENDAR = /\b(e-?mails?|inbox|calendars?|meetings?|events?)\b/i;

interface TodoItem {
  id?: number;
  title?: string;
  dueDate?: string | null;
  priority?: number | null;
}

export function isHeartbeatRequest(request: string): boolean {
  return request.startsWith(HEARTBEAT_PREFIX);
}

const call = (calls: ToolCallPlan[]): LocalAction => ({ kind: "call", calls });
const answer = (text: string): LocalAction => ({ kind: "answer", text });

export function heartbeatFlow(turn: LocalTurn): LocalAction {
  const checklist = checklistOf(turn.requestLines);
  const canList = turn.available.has("list_todos");
  const asked = turn.available.has("create_todo") ? checklistTodos(checklist, turn.today) : [];
  const lists = turn.exchanges.filter((e) => e.toolName === "list_todos");

  if (canList && lists.length === 0) {
    return call([
      { toolName: "list_todos", input: { when: "overdue" } },
      { toolName: "list_todos", input: { when: "today" } },
      { toolName: "list_todos", input: { when: "all", limit: OPEN_TODOS_READ } },
      // One search per todo the checklist asks for: is it already there?
      ...asked.map((todo) => ({ toolName: "list_todos", input: { when: "all", q: todo.title, limit: 5 } })),
    ]);
  }
  const created = turn.exchanges.filter((e) => e.toolName === "create_todo");
  if (created.length === 0) {
    const missing = asked.filter((todo) => !alreadyOpen(todo, lists));
    if (missing.length > 0) return call(missing.map((todo) => ({ toolName: "create_todo", input: { ...todo } })));
  }
  return answer(heartbeatMessage(turn, checklist, lists, created));
}

/** The todos the checklist's lines ask for, in order, without repeats. */
function checklistTodos(checklist: string, today: string): TodoRequest[] {
  const found = new Map<string, TodoRequest>();
  for (const line of checklist.split("\n")) {
    const todo = parseTodoRequest(line.replace(/^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)/, ""), today);
    if (todo && !found.has(todo.title.toLowerCase())) found.set(todo.title.toLowerCase(), todo);
  }
  return [...found.values()].slice(0, MAX_CHECKLIST_TODOS);
}

function todosOf(exchange: ToolExchange | undefined): TodoItem[] {
  const todos = exchange?.ok ? (exchange.output as { todos?: unknown })?.todos : undefined;
  return Array.isArray(todos) ? (todos as TodoItem[]) : [];
}

function alreadyOpen(todo: TodoRequest, lists: readonly ToolExchange[]): boolean {
  const search = lists.find((e) => e.input.q === todo.title);
  // Without an answer to go by, adding could make a duplicate: leave it.
  if (!search?.ok) return true;
  return todosOf(search).some((item) => (item.title ?? "").toLowerCase() === todo.title.toLowerCase());
}

function describeTodo(todo: TodoItem): string {
  const details = [todo.dueDate ? `due ${todo.dueDate}` : null, todo.priority ? `priority ${todo.priority}` : null].filter(Boolean);
  return `${clip(todo.title ?? "Untitled", 120)}${details.length > 0 ? ` (${details.join(", ")})` : ""}`;
}

function section(label: string, todos: readonly TodoItem[]): string {
  const shown = todos.slice(0, SHOWN_PER_SECTION).map(describeTodo).join("; ");
  const more = todos.length > SHOWN_PER_SECTION ? `; and ${todos.length - SHOWN_PER_SECTION} more` : "";
  return `- ${label} (${todos.length}): ${shown}${more}`;
}

function creationLine(exchange: ToolExchange): string {
  const title = String(exchange.input.title ?? "New todo");
  if (!exchange.ok) return `- Could not add the todo “${title}”: ${clip(String(exchange.output), 200)}`;
  const output = exchange.output as { skipped?: boolean; reason?: string };
  if (output?.skipped) return `- Would add the todo “${title}” (not added: ${output.reason ?? "skipped"}).`;
  return `- Added the todo “${title}”, as the checklist asks.`;
}

function heartbeatMessage(turn: LocalTurn, checklist: string, lists: readonly ToolExchange[], created: readonly ToolExchange[]): string {
  const lines = [`**Heartbeat, ${turn.today}**`, ""];
  const listed = (when: string) => lists.find((e) => e.input.when === when && e.input.q === undefined);
  const failed = lists.find((e) => !e.ok && e.input.q === undefined);
  if (!turn.available.has("list_todos")) lines.push("- I can't read your todos in this heartbeat.");
  else if (failed) lines.push(`- I couldn't read your todos: ${clip(String(failed.output), 200)}`);
  else {
    const overdue = todosOf(listed("overdue"));
    const today = todosOf(listed("today"));
    const seen = new Set([...overdue, ...today].map((todo) => todo.id));
    const high = todosOf(listed("all")).filter((todo) => !seen.has(todo.id) && todo.priority != null && todo.priority <= HIGH_PRIORITY);
    if (overdue.length > 0) lines.push(section("Overdue", overdue));
    if (today.length > 0) lines.push(section("Due today", today));
    if (high.length > 0) lines.push(section("High priority", high));
    if (overdue.length + today.length + high.length === 0) lines.push("- All is well: nothing overdue, due today or of high priority.");
  }
  for (const exchange of created) lines.push(creationLine(exchange));
  if (MENTIONS_EMAIL_OR_CALENDAR.test(checklist)) lines.push("- Email and calendar: not connected here, so not checked.");
  return lines.join("\n");
}
