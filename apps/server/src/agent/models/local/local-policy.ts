import {
  answerCreatedNote,
  answerCreatedTodo,
  answerFromAttachments,
  answerFromMemory,
  answerFromNotes,
  answerRemembered,
  answerTodos,
  answerToolFailure,
  answerUnavailable,
  greeting,
  whoseData,
} from "./local-answers";
import { heartbeatFlow, isHeartbeatRequest } from "./local-heartbeat";
import { CREATE_TODO, cleanTitle, parseTodoRequest } from "./local-todo-request";
import type { LocalAction, LocalTurn, ToolCallPlan, ToolExchange } from "./local-turn";
import { contentWords } from "./text-analysis";

const call = (...calls: ToolCallPlan[]): LocalAction => ({ kind: "call", calls });
const answer = (text: string): LocalAction => ({ kind: "answer", text });

const GREETING = /^\s*(hi|hello|hey|thanks|thank you|good (morning|afternoon|evening))\b[\s!.,]*(there|tandem)?[\s!.]*$/i;
const CREATE_NOTE = /\b(?:create|write|make|start|add|save|new)\s+(?:a\s+|an\s+|new\s+)*note\b/i;
const REMEMBER = /^\s*(?:please\s+)?remember(?:\s+that)?\s+/i;
const TODO_QUESTION = /\b(todos?|to-dos?|tasks?|overdue|due|agenda)\b/i;
const SUMMARISE = /\b(summar(?:y|ise|ize|ies)|tl;?dr)\b/i;
const ABOUT_ME = /\b(my|me|i)\b.*\b(goals?|preferences?|name|values|priorities|remember|about me)\b|\bwho am i\b/i;

/**
 * The `local` model's policy: rules, not weights. It recognises what is asked, calls only tools it
 * was given, and answers from what they returned, citing the notes it used. Requests that came only
 * from untrusted text never lead to a write.
 */
export function decide(turn: LocalTurn): LocalAction {
  const { request } = turn;
  const attachments = turn.blocks.filter((block) => block.source === "note");
  if (!request && attachments.length === 0 && turn.blocks.length === 0) return answer("What would you like me to do?");
  // A contact's or guest's words arrive only as blocks: their greeting is still a greeting (it writes nothing).
  const spoken = request || turn.blocks.map((block) => block.text).join(" ");
  if (GREETING.test(spoken) && attachments.length === 0) return answer(greeting(turn.ownerName));
  if (isHeartbeatRequest(request)) return heartbeatFlow(turn);

  if (!turn.readOnly) {
    if (CREATE_TODO.test(request)) return createTodoFlow(turn);
    if (REMEMBER.test(request)) return rememberFlow(turn);
    if (CREATE_NOTE.test(request)) return createNoteFlow(turn);
  }
  if (attachments.length > 0) return answer(answerFromAttachments(attachments, request));
  const question = spoken;
  if (TODO_QUESTION.test(question) && !SUMMARISE.test(question)) return todoQuestionFlow(turn, question);
  if (ABOUT_ME.test(question)) return memoryFlow(turn, question);
  return notesFlow(turn, question);
}

function firstFailure(turn: LocalTurn): ToolExchange | undefined {
  return turn.exchanges.find((exchange) => !exchange.ok);
}

function createTodoFlow(turn: LocalTurn): LocalAction {
  if (!turn.available.has("create_todo")) return answer(answerUnavailable("add todos"));
  const done = turn.exchanges.find((e) => e.toolName === "create_todo");
  if (done) return answer(done.ok ? answerCreatedTodo(done.output, turn.ownerName) : answerToolFailure("add the todo", done.output));
  return call({ toolName: "create_todo", input: { ...(parseTodoRequest(turn.request, turn.today) ?? { title: "New todo" }) } });
}

function createNoteFlow(turn: LocalTurn): LocalAction {
  if (!turn.available.has("create_note")) return answer(answerUnavailable("create notes"));
  const done = turn.exchanges.find((e) => e.toolName === "create_note");
  if (done) return answer(done.ok ? answerCreatedNote(done.output) : answerToolFailure("create the note", done.output));
  const request = turn.request;
  const quoted = /["“']([^"”']{1,200})["”']/.exec(request)?.[1];
  const named = /\b(?:titled|called|named)\s+(.{1,200}?)(?:[:.]|\s+(?:saying|with|that says|containing)\b|$)/i.exec(request)?.[1];
  const about = /\babout\s+(.{1,200}?)(?:[:.]|\s+(?:saying|with|that says|containing)\b|$)/i.exec(request)?.[1];
  const title = cleanTitle(quoted ?? named ?? about ?? "") || "New note";
  const body = /(?::|\b(?:saying|that says|containing|with the text))\s*([\s\S]+)$/i.exec(request)?.[1]?.trim();
  return call({ toolName: "create_note", input: { title, content: body && body !== title ? body : `# ${title}\n` } });
}

function rememberFlow(turn: LocalTurn): LocalAction {
  if (!turn.available.has("memory_write")) return answer(answerUnavailable(`write to ${whoseData(turn)} memory`));
  const done = turn.exchanges.find((e) => e.toolName === "memory_write");
  if (done) return answer(done.ok ? answerRemembered(done.output) : answerToolFailure("remember that", done.output));
  const fact = turn.request.replace(REMEMBER, "").trim();
  return call({ toolName: "memory_write", input: { path: "Self/Remembered", content: `- ${fact} (${turn.today})`, mode: "append" } });
}

function todoQuestionFlow(turn: LocalTurn, question: string): LocalAction {
  if (!turn.available.has("list_todos")) return answer(answerUnavailable(`read ${whoseData(turn)} todos`));
  const lists = turn.exchanges.filter((e) => e.toolName === "list_todos");
  if (lists.length > 0) {
    const failed = lists.find((e) => !e.ok);
    return answer(
      failed
        ? answerToolFailure(`read ${whoseData(turn)} todos`, failed.output)
        : answerTodos(
            lists.map((e) => ({ when: String(e.input.when), output: e.output })),
            turn.ownerName,
          ),
    );
  }
  if (/\boverdue\b/i.test(question)) return call({ toolName: "list_todos", input: { when: "overdue" } });
  if (/\b(today|tonight|due)\b/i.test(question)) {
    return call({ toolName: "list_todos", input: { when: "overdue" } }, { toolName: "list_todos", input: { when: "today" } });
  }
  if (/\b(upcoming|this week|next|soon)\b/i.test(question)) return call({ toolName: "list_todos", input: { when: "upcoming" } });
  return call({ toolName: "list_todos", input: { when: "all" } });
}

function memoryFlow(turn: LocalTurn, question: string): LocalAction {
  if (!turn.available.has("memory_search")) return notesFlow(turn, question);
  const search = turn.exchanges.find((e) => e.toolName === "memory_search");
  if (!search) return call({ toolName: "memory_search", input: { query: contentWords(question).join(" ") || question, limit: 5 } });
  if (!search.ok) return answer(answerToolFailure(`search ${whoseData(turn)} memory`, search.output));
  const hits = resultList(search.output, "results");
  if (hits.length === 0) return notesFlow({ ...turn, exchanges: turn.exchanges.filter((e) => e !== search) }, question);
  const reads = turn.exchanges.filter((e) => e.toolName === "get_note_content");
  const first = hits[0] as { noteId?: number };
  if (reads.length === 0 && turn.available.has("get_note_content") && typeof first.noteId === "number") {
    return call({ toolName: "get_note_content", input: { noteId: first.noteId } });
  }
  return answer(
    answerFromMemory(
      question,
      hits,
      reads.filter((e) => e.ok).map((e) => e.output),
      whoseData(turn),
    ),
  );
}

/** Notes a question is about: search, read the two best, answer from them. */
function notesFlow(turn: LocalTurn, question: string): LocalAction {
  if (!turn.available.has("search_notes")) return answer(answerUnavailable(`read ${whoseData(turn)} notes`));
  const failure = firstFailure(turn);
  const search = turn.exchanges.find((e) => e.toolName === "search_notes");
  const summarise = SUMMARISE.test(question);
  const query = searchQuery(question, summarise);
  if (!search) return call({ toolName: "search_notes", input: { query, limit: 5 } });
  if (!search.ok) return answer(answerToolFailure(`search ${whoseData(turn)} notes`, search.output));
  const hits = resultList(search.output, "results") as { id?: number; title?: string; snippet?: string }[];
  const reads = turn.exchanges.filter((e) => e.toolName === "get_note_content");
  const toRead = hits.slice(0, summarise ? 1 : 2).filter((hit) => typeof hit.id === "number");
  if (reads.length === 0 && toRead.length > 0 && turn.available.has("get_note_content")) {
    return call(...toRead.map((hit) => ({ toolName: "get_note_content", input: { noteId: hit.id } })));
  }
  if (failure && failure !== search && reads.every((e) => !e.ok) && hits.length === 0)
    return answer(answerToolFailure(`read ${whoseData(turn)} notes`, failure.output));
  return answer(
    answerFromNotes({
      query,
      summarise,
      hits,
      notes: reads.filter((e) => e.ok).map((e) => e.output),
      whose: whoseData(turn),
    }),
  );
}

/** The words to search for: a quoted phrase, or the question's content words without the verb that asked for a summary. */
function searchQuery(question: string, summarise: boolean): string {
  const quoted = /["“]([^"”]{1,200})["”]/.exec(question)?.[1];
  if (quoted) return quoted;
  const words = contentWords(summarise ? question.replace(SUMMARISE, " ") : question);
  return (words.length > 0 ? words.join(" ") : question).slice(0, 500);
}

function resultList(output: unknown, key: string): unknown[] {
  const list = (output as Record<string, unknown> | null)?.[key];
  return Array.isArray(list) ? list : [];
}
