import { DocumentGate } from "../sync/document-gate";
import { useLocalSync } from "../sync/use-document";
import { TodoBoard } from "./todo-board";

/** The Todos section: the signed-in user's `todos:<userId>` document, opened through the local sync hub. */
export function TodosView() {
  const { todosDoc } = useLocalSync();
  return <DocumentGate name={todosDoc}>{(doc) => <TodoBoard doc={doc} />}</DocumentGate>;
}
