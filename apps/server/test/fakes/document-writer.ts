/**
 * A second process writing a document through the real DocumentStore, as any CLI command beside
 * a running server does: `node --import tsx document-writer.ts <data-dir|postgres-url> <name> <from> <to>`.
 * It loads the document, prints "loaded", waits for a line on stdin, then replaces `from` with
 * `to` in the note body of the copy it loaded (by then possibly outdated), stores it and prints
 * the stored size.
 */
import { once } from "node:events";
import { createInterface } from "node:readline";
import { readNoteBody, writeNoteBody } from "@tandem/core";
import type { JSONContent } from "@tiptap/core";
import { openDatabase } from "../../src/db/database";
import { DocumentStore } from "../../src/sync/document-store";

const [storage = "", name = "", from = "", to = ""] = process.argv.slice(2);
const database = await openDatabase(storage.startsWith("postgres") ? { dataDir: "", databaseUrl: storage } : { dataDir: storage });
const store = new DocumentStore(database.db);
const doc = await store.loadDoc(name);
process.stdout.write("loaded\n");
const input = createInterface({ input: process.stdin });
await once(input, "line");
input.close();
const replace = (node: JSONContent): JSONContent => ({
  ...node,
  ...(node.text !== undefined ? { text: node.text.replace(from, to) } : {}),
  ...(node.content ? { content: node.content.map(replace) } : {}),
});
writeNoteBody(doc, replace(readNoteBody(doc)));
process.stdout.write(`${JSON.stringify({ bytes: await store.save(name, doc) })}\n`);
await database.close();
