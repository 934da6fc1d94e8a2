import { readTodos } from "@tandem/core/documents";
import type * as Y from "yjs";
import { useDocValue } from "../sync/use-document";
import type { TodoItem } from "./todo-lists";

function readTodoItems(doc: Y.Doc): readonly TodoItem[] {
  return [...readTodos(doc)].map(([uuid, meta]) => ({ uuid, ...meta }));
}

const NO_TODOS: readonly TodoItem[] = Object.freeze([]);

/** Every todo of the document, re-read whenever it changes (here, from the server, or from another device). */
export function useTodos(doc: Y.Doc): readonly TodoItem[] {
  return useDocValue(doc, readTodoItems, NO_TODOS);
}
