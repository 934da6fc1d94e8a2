import { escapeHtml } from "../../http/escape-html";
import type { BriefingFacts, BriefingSections, BriefingSuggestion, BriefingWriter, TodoFact, WriterUsage } from "./briefing-writer";

/**
 * The `local` provider's briefing: the facts laid out by rules, no model. Every list item reads
 * `<strong>name</strong> · detail · detail`, which the strategies and matrix read back. All text
 * from the workspace and the request is escaped here. When a note changed is stored as
 * `<time>ISO</time>` (the HTML time element's machine-readable form), for readers to say
 * relative to when they show it.
 */

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
const quote = (text: string) => `“${text}”`;
const list = (items: string[]) => `<ul>${items.map((item) => `<li>${item}</li>`).join("")}</ul>`;
const paragraph = (text: string) => `<p>${escapeHtml(text)}</p>`;
/** A list item: its name in bold, then its details. */
const entry = (name: string, details: (string | null | false)[], time?: string) =>
  [
    `<strong>${escapeHtml(name)}</strong>`,
    ...(time ? [`<time>${escapeHtml(time)}</time>`] : []),
    ...details.filter((d): d is string => Boolean(d)).map(escapeHtml),
  ].join(" · ");
const more = (shown: number, total: number, what: string) => (total > shown ? paragraph(`And ${plural(total - shown, what)} more.`) : "");

function todoDetail(todo: TodoFact, today: string): string {
  return todo.overdue ? `overdue since ${todo.dueDate}` : todo.dueDate === today ? "due today" : `due ${todo.dueDate}`;
}

function todoSummary({ todos, today }: BriefingFacts): string {
  if (todos.items.length === 0) return paragraph("Nothing is due today and nothing is overdue.");
  const counts = [todos.overdue && `${todos.overdue} overdue`, todos.dueToday && `${todos.dueToday} due today`].filter(Boolean);
  return (
    paragraph(`${counts.join(" and ")}.`) +
    list(todos.items.map((todo) => entry(todo.title, [todoDetail(todo, today), todo.priority !== null && `priority ${todo.priority}`]))) +
    more(todos.items.length, todos.overdue + todos.dueToday, "todo")
  );
}

function notesSummary({ notes, windowDescription }: BriefingFacts): string {
  if (notes.items.length === 0) return paragraph(`No notes changed ${windowDescription}.`);
  return (
    paragraph(`${plural(notes.total, "note")} changed ${windowDescription}.`) +
    list(notes.items.map((note) => entry(note.title, [note.extract], note.updatedAt))) +
    more(notes.items.length, notes.total, "note")
  );
}

function calendarSummary({ events }: BriefingFacts): string {
  if (events.length === 0) return paragraph("No calendar events.");
  return (
    paragraph(`${plural(events.length, "event")}.`) +
    list(events.map((event) => entry(event.title, [event.when, event.location, event.detail, !event.upcoming && "ended"])))
  );
}

function emailAttentionSummary({ emails }: BriefingFacts): string {
  if (emails.length === 0) return paragraph("No emails need attention.");
  const waiting = emails.filter((email) => email.needsReply).length;
  return (
    paragraph(`${plural(emails.length, "email")}, ${waiting} ${waiting === 1 ? "needs" : "need"} a reply.`) +
    list(
      emails.map((email) =>
        entry(email.text, [
          `from ${email.sender}`,
          email.needsReply && "needs reply",
          email.priority !== "normal" && `${email.priority} priority`,
          email.category,
        ]),
      ),
    )
  );
}

function statusQuoSummary({ todos, notes, events, emails, windowDescription }: BriefingFacts): string {
  const first = todos.items[0];
  const next = events.find((event) => event.upcoming);
  const sentences = [
    first
      ? `${[todos.overdue && `${plural(todos.overdue, "todo")} overdue`, todos.dueToday && `${plural(todos.dueToday, "todo")} due today`]
          .filter(Boolean)
          .join(" and ")}; start with ${quote(first.title)}.`
      : "Nothing is due today and nothing is overdue.",
    next ? `Next on the calendar: ${quote(next.title)}, ${next.when}.` : events.length ? "No more events on the calendar." : "",
    emails.length ? `${emails.filter((e) => e.needsReply).length} of ${plural(emails.length, "email")} waiting for a reply.` : "",
    notes.total ? `${plural(notes.total, "note")} changed ${windowDescription}, most recently ${quote(notes.items[0]?.title ?? "")}.` : "",
  ];
  return paragraph(sentences.filter(Boolean).join(" "));
}

/** Up to three suggestions, the most pressing kind first; one to plan the day when nothing presses. */
function suggestions({ todos, notes, events, emails }: BriefingFacts): BriefingSuggestion[] {
  const found: BriefingSuggestion[] = [];
  const first = todos.items[0];
  if (first) {
    found.push(
      first.overdue
        ? {
            title: "Clear overdue todos",
            description: `${plural(todos.overdue, "todo")} overdue, the most important ${quote(first.title)}.`,
            action: `Finish ${quote(first.title)} or give it a new due date.`,
          }
        : {
            title: "Finish today's todos",
            description: `${plural(todos.dueToday, "todo")} due today, starting with ${quote(first.title)}.`,
            action: `Start on ${quote(first.title)}.`,
          },
    );
  }
  const waiting = emails.filter((email) => email.needsReply);
  const firstWaiting = waiting[0];
  if (firstWaiting) {
    found.push({
      title: "Answer waiting emails",
      description: `${plural(waiting.length, "email")} need${waiting.length === 1 ? "s" : ""} a reply, first from ${firstWaiting.sender}.`,
      action: `Reply to ${firstWaiting.sender} about ${quote(firstWaiting.text)}.`,
    });
  }
  const next = events.find((event) => event.upcoming);
  if (next) {
    found.push({
      title: `Prepare for ${quote(next.title)}`,
      description: `Scheduled ${next.when}.`,
      action: `Note what you need from ${quote(next.title)} before it starts.`,
    });
  }
  const latest = notes.items[0];
  if (latest) {
    found.push({
      title: "Review recent notes",
      description: `${plural(notes.total, "note")} changed; the latest is ${quote(latest.title)}.`,
      action: `Turn the open points of ${quote(latest.title)} into todos.`,
    });
  }
  if (found.length === 0) {
    found.push({
      title: "Plan your day",
      description: "Nothing is due, waiting or scheduled.",
      action: "Pick one thing that matters and add it as a todo.",
    });
  }
  return found.slice(0, 3);
}

/** About four characters a token, as model tokenisers average on English. */
const estimateTokens = (text: string) => Math.ceil(text.length / 4);

export function writeBriefing(facts: BriefingFacts): BriefingSections {
  return {
    statusQuoSummary: statusQuoSummary(facts),
    todoSummary: todoSummary(facts),
    calendarSummary: calendarSummary(facts),
    notesSummary: notesSummary(facts),
    emailAttentionSummary: emailAttentionSummary(facts),
    suggestions: suggestions(facts),
  };
}

/** The writer the `local` provider uses, and the fallback when a model writer fails. */
export const deterministicWriter: BriefingWriter = {
  async write(facts) {
    const sections = writeBriefing(facts);
    const usage: WriterUsage = {
      provider: "local",
      model: "tandem-local",
      promptTokens: estimateTokens(JSON.stringify(facts)),
      completionTokens: estimateTokens(JSON.stringify(sections)),
    };
    return { sections, usage };
  },
};
