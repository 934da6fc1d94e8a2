import { clip } from "../../../workspace/notes/extractive-summary";
import type { UntrustedBlock } from "../../prompt/untrusted-blocks";
import { bestSentences, keyTerms, sections, termHits } from "./text-analysis";

/** The `local` model's answers, composed only from what tools returned and content it was given. */

/**
 * Whose notes, todos and memory an answer speaks of: "your" to the owner, "Alex's" to anyone else
 * (a contact's agent, a guest), who must never be told the owner's data is theirs.
 */
export function whoseData(turn: { readonly ownerName?: string }): string {
  return turn.ownerName === undefined ? "your" : `${turn.ownerName}'s`;
}

export function greeting(ownerName?: string): string {
  return ownerName === undefined
    ? "Hello! I can search and summarise your notes, tell you what is due, add todos and notes, and remember things for you."
    : `Hello! I'm ${ownerName}'s agent. I can answer from what ${ownerName} lets me share with you here.`;
}

const SENTENCES_PER_NOTE = 3;
const SUMMARY_SENTENCES = 4;

interface NoteContent {
  id?: number;
  title?: string;
  markdown?: string;
}

interface Hit {
  id?: number;
  title?: string;
  snippet?: string;
}

function quoteTitle(title: unknown): string {
  return `“${String(title ?? "Untitled") || "Untitled"}”`;
}

function sourcesLine(titles: readonly unknown[]): string {
  const unique = [...new Set(titles.map(quoteTitle))];
  return unique.length > 0 ? `\n\nSources: ${unique.join(", ")}` : "";
}

export function answerUnavailable(what: string): string {
  return `I can't ${what} in this conversation: that isn't among the things I'm allowed to do here.`;
}

export function answerToolFailure(what: string, error: unknown): string {
  return `I couldn't ${what}: ${clip(String(error ?? "the tool failed"), 300)}`;
}

export function answerFromNotes(input: {
  query: string;
  summarise: boolean;
  hits: readonly Hit[];
  notes: readonly unknown[];
  /** "your" or "Alex's" (see {@link whoseData}). */
  whose: string;
}): string {
  const notes = input.notes as NoteContent[];
  if (input.hits.length === 0) return `I found nothing in ${input.whose} notes about “${clip(input.query, 120)}”.`;
  const terms = input.summarise ? [] : keyTerms(input.query);
  if (notes.length === 0) {
    // Only the search's snippets to go on (no read tool in this run).
    const lines = input.hits.slice(0, 3).map((hit) => `- **${hit.title ?? "Untitled"}**: ${clip(hit.snippet ?? "", 300)}`);
    return `Here is what I found in ${input.whose} notes:\n\n${lines.join("\n")}${sourcesLine(input.hits.slice(0, 3).map((hit) => hit.title))}`;
  }
  const parts = notes.map((note) => {
    const picked = bestSentences(note.markdown ?? "", terms, input.summarise ? SUMMARY_SENTENCES : SENTENCES_PER_NOTE);
    const text = picked.length > 0 ? picked.map((s) => clip(s, 400)).join(" ") : "(this note is empty)";
    return `**${note.title ?? "Untitled"}**: ${text}`;
  });
  const intro = input.summarise ? "Summary" : `Here is what ${input.whose} notes say`;
  return `${intro}:\n\n${parts.join("\n\n")}${sourcesLine(notes.map((note) => note.title))}`;
}

export function answerFromAttachments(attachments: readonly UntrustedBlock[], request: string): string {
  const summarise = request.length === 0 || /\bsummar|tl;?dr/i.test(request);
  const terms = summarise ? [] : keyTerms(request);
  const parts = attachments.map((block) => {
    const picked = bestSentences(block.text, terms, summarise ? SUMMARY_SENTENCES : SENTENCES_PER_NOTE);
    return `**${block.attributes.title ?? "Attached note"}**: ${picked.map((s) => clip(s, 400)).join(" ") || "(empty)"}`;
  });
  return `${summarise ? "Summary" : "From the attached notes"}:\n\n${parts.join("\n\n")}${sourcesLine(attachments.map((b) => b.attributes.title))}`;
}

export function answerFromMemory(question: string, hits: readonly unknown[], notes: readonly unknown[], whose: string): string {
  const terms = keyTerms(question);
  const first = hits[0] as { title?: string; path?: string; snippet?: string };
  const note = notes[0] as NoteContent | undefined;
  if (note?.markdown) {
    const best = sections(note.markdown)
      .map((section, index) => ({ section, index, score: termHits(section.heading, terms) * 3 + termHits(section.body, terms) }))
      .sort((a, b) => b.score - a.score || a.index - b.index)[0];
    if (best && best.score > 0) {
      const heading = best.section.heading ? `**${best.section.heading}** ` : "";
      return `From ${first.path ?? quoteTitle(note.title)}:\n\n${heading}\n${clip(best.section.body, 1500)}${sourcesLine([note.title])}`;
    }
  }
  return `From ${whose} memory:\n\n${hits
    .slice(0, 3)
    .map((hit) => {
      const h = hit as { title?: string; path?: string; snippet?: string };
      return `- ${h.path ?? h.title}: ${clip(h.snippet ?? "", 300)}`;
    })
    .join("\n")}${sourcesLine(hits.slice(0, 3).map((hit) => (hit as { title?: string }).title))}`;
}

interface TodoItem {
  id?: number;
  title?: string;
  dueDate?: string | null;
  priority?: number | null;
  overdue?: boolean;
}

const LIST_LABELS: Record<string, string> = {
  overdue: "Overdue",
  today: "Due today",
  upcoming: "Upcoming",
  all: "Open todos",
};

export function answerTodos(lists: readonly { when: string; output: unknown }[], ownerName?: string): string {
  const blocks = lists.map(({ when, output }) => {
    const todos = ((output as { todos?: TodoItem[] })?.todos ?? []).slice(0, 20);
    const label = LIST_LABELS[when] ?? "Todos";
    if (todos.length === 0) return `${label}: nothing.`;
    const lines = todos.map((todo) => {
      const details = [todo.dueDate ? `due ${todo.dueDate}` : null, todo.priority ? `priority ${todo.priority}` : null].filter(Boolean);
      return `- ${todo.title ?? "Untitled"}${details.length > 0 ? ` (${details.join(", ")})` : ""}`;
    });
    return `${label} (${todos.length}):\n${lines.join("\n")}`;
  });
  // Someone other than the owner is told whose list this is.
  return `${ownerName === undefined ? "" : `From ${ownerName}'s todos:\n\n`}${blocks.join("\n\n")}`;
}

export function answerCreatedTodo(output: unknown, ownerName?: string): string {
  const todo = (output as { todo?: TodoItem })?.todo ?? {};
  const list = ownerName === undefined ? "" : ` to ${ownerName}'s todos`;
  return `Added the todo “${todo.title ?? "New todo"}”${list}${todo.dueDate ? `, due ${todo.dueDate}` : ""}.`;
}

export function answerCreatedNote(output: unknown): string {
  const note = (output as { note?: { title?: string } })?.note ?? {};
  return `Created the note “${note.title ?? "New note"}”.`;
}

export function answerRemembered(output: unknown): string {
  const note = (output as { note?: { path?: string; title?: string } })?.note ?? {};
  return `I'll remember that (saved in ${note.path ?? `Memory/${note.title ?? "Self"}`}).`;
}
