import { type BriefingRequest, todayIn } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { extractiveSummary } from "../../workspace/notes/extractive-summary";
import { recentNotes } from "../../workspace/notes/notes-stats";
import { listTodos, type TodoQuery } from "../../workspace/todos/todos-service";
import type { BriefingFacts, EmailFact, EventFact, TodoFact } from "./briefing-writer";
import { oneLine } from "./normalise";
import { addDays, type TimeWindow } from "./time-window";

/** Todos and notes a briefing names at most; it says how many more there are. */
const MAX_TODOS = 25;
const MAX_NOTES = 15;
const EXTRACT = { sentences: 1, maxChars: 160 };
const LINE_CHARS = 300;

type EmailInput = NonNullable<BriefingRequest["emails"]>[number];
type EventInput = NonNullable<BriefingRequest["calendarEvents"]>[number];

/** Open todos due today and overdue, in the user's time zone: highest priority first, then the oldest due. */
async function dueTodos(db: Kysely<Schema>, ownerId: number, timeZone: string, now: Date): Promise<BriefingFacts["todos"]> {
  const query = (date: "today" | "overdue"): TodoQuery => ({
    date,
    timezone: timeZone,
    completed: false,
    sort: "priority",
    order: "asc",
    limit: MAX_TODOS,
    offset: 0,
    includeSteps: false,
  });
  const [overdue, dueToday] = await Promise.all([
    listTodos(db, ownerId, query("overdue"), now),
    listTodos(db, ownerId, query("today"), now),
  ]);
  const today = todayIn(timeZone, now);
  const items: TodoFact[] = [...overdue.todos, ...dueToday.todos].map((todo) => ({
    title: todo.title,
    dueDate: todo.dueDate as string,
    priority: todo.priority,
    overdue: (todo.dueDate as string) < today,
  }));
  items.sort((a, b) => (a.priority ?? 5) - (b.priority ?? 5) || a.dueDate.localeCompare(b.dueDate));
  return { items: items.slice(0, MAX_TODOS), overdue: overdue.total, dueToday: dueToday.total };
}

async function changedNotes(db: Kysely<Schema>, ownerId: number, window: TimeWindow, now: Date): Promise<BriefingFacts["notes"]> {
  const until = window.end.getTime() < now.getTime() ? window.end.toISOString() : undefined;
  const { rows, total } = await recentNotes(db, ownerId, { limit: MAX_NOTES, since: window.start.toISOString(), until });
  return {
    items: rows.map((row) => ({
      id: row.id,
      title: row.title,
      updatedAt: row.updated,
      extract: extractiveSummary(row.title, row.text ?? "", EXTRACT),
    })),
    total,
  };
}

const isDate = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);

/** Events as the user reads them: times in their zone, "today" and "tomorrow" by name. */
function describeEvents(events: EventInput[], timeZone: string, today: string, now: Date): EventFact[] {
  const dateOf = (instant: Date) => todayIn(timeZone, instant);
  const dayName = (date: string) =>
    date === today
      ? "today"
      : date === addDays(today, 1)
        ? "tomorrow"
        : date === addDays(today, -1)
          ? "yesterday"
          : new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", weekday: "short", day: "numeric", month: "short" }).format(
              new Date(`${date}T00:00:00.000Z`),
            );
  const time = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  return events
    .map((event, index) => {
      let when: string;
      let upcoming: boolean;
      if (isDate(event.start)) {
        when = `${dayName(event.start)}, all day`;
        upcoming = (isDate(event.end) && event.end > event.start ? addDays(event.end, -1) : event.start) >= today;
      } else {
        const start = new Date(event.start);
        const end = new Date(event.end);
        const startDay = dateOf(start);
        const endDay = dateOf(end);
        when = `${dayName(startDay)} ${time.format(start)}–${endDay === startDay ? "" : `${dayName(endDay)} `}${time.format(end)}`;
        upcoming = end.getTime() > now.getTime();
      }
      return {
        fact: {
          title: oneLine(event.summary, 200) || "(untitled event)",
          when,
          start: event.start,
          location: oneLine(event.location, 200) || null,
          detail: oneLine(event.description, 160) || null,
          upcoming,
        },
        order: Date.parse(event.start),
        index,
      };
    })
    .sort((a, b) => a.order - b.order || a.index - b.index)
    .map((entry) => entry.fact);
}

/** high, urgent, important or 1 → high; low or 4+ → low; anything else normal. */
function emailPriority(value: string | number | null | undefined): EmailFact["priority"] {
  const text = String(value ?? "")
    .trim()
    .toLowerCase();
  if (/^\d+$/.test(text)) {
    const number = Number(text);
    return number <= 1 ? "high" : number >= 4 ? "low" : "normal";
  }
  if (/high|urgent|important|critical/.test(text)) return "high";
  if (/low/.test(text)) return "low";
  return "normal";
}

const PRIORITY_RANK = { high: 0, normal: 1, low: 2 };

/** Emails needing a reply first, then by priority, then the newest. */
function describeEmails(emails: EmailInput[]): EmailFact[] {
  return emails
    .map((email, index) => ({
      fact: {
        sender: oneLine(email.sender, 200) || "unknown sender",
        text: oneLine(email.summary, LINE_CHARS) || oneLine(email.snippet, LINE_CHARS) || "(no summary)",
        priority: emailPriority(email.priority),
        needsReply: email.needsReply === true,
        category: oneLine(email.category, 100) || null,
      },
      time: Date.parse(email.date ?? "") || 0,
      index,
    }))
    .sort(
      (a, b) =>
        Number(b.fact.needsReply) - Number(a.fact.needsReply) ||
        PRIORITY_RANK[a.fact.priority] - PRIORITY_RANK[b.fact.priority] ||
        b.time - a.time ||
        a.index - b.index,
    )
    .map((entry) => entry.fact);
}

/** Everything a briefing of `ownerId`'s workspace says, for the window and the given emails and events. */
export async function gatherFacts(
  db: Kysely<Schema>,
  ownerId: number,
  request: BriefingRequest,
  window: TimeWindow,
  now: Date,
): Promise<BriefingFacts> {
  const timeZone = request.userTimezone;
  const today = todayIn(timeZone, now);
  const [todos, notes] = await Promise.all([dueTodos(db, ownerId, timeZone, now), changedNotes(db, ownerId, window, now)]);
  return {
    timeDuration: window.label,
    windowDescription: window.description,
    timeZone,
    today,
    todos,
    notes,
    events: describeEvents(request.calendarEvents ?? [], timeZone, today, now),
    emails: describeEmails(request.emails ?? []),
  };
}
