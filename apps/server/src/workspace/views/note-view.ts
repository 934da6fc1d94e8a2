import { countWords, jsonHeadings, jsonToText, readNoteBody } from "@tandem/core";
import type { Kysely, Transaction } from "kysely";
import type * as Y from "yjs";
import { nowIso } from "../../clock";
import type { Schema } from "../../db/schema";

/** The text view of one note body: what listing, grep, search and word counts read. */
export async function materializeNoteBody(db: Kysely<Schema>, uuid: string, doc: Y.Doc): Promise<void> {
  const body = readNoteBody(doc);
  const text = jsonToText(body);
  const values = {
    text,
    headings: jsonHeadings(body).join("\n"),
    word_count: countWords(text),
    size_bytes: Buffer.byteLength(text),
    updated_at: nowIso(),
  };
  // The title comes from the workspace view when it already knows the note; it keeps it current after that.
  const meta = await db.selectFrom("notes").select("title").where("uuid", "=", uuid).executeTakeFirst();
  await db
    .insertInto("note_bodies")
    .values({ uuid, title: meta?.title ?? "", ...values })
    .onConflict((oc) => oc.column("uuid").doUpdateSet(values))
    .execute();
}

/**
 * Puts a note's title into its text view, making the view (empty) when the note's body was never
 * stored: a note made in the desktop with a title and nothing typed has no stored body document,
 * yet search, which reads this view, must find it by its title whatever made it. An empty body
 * dates from the note's creation, so it never makes the note look more recently changed.
 */
export async function materializeNoteTitle(tx: Transaction<Schema>, uuid: string, title: string, createdAt: string): Promise<void> {
  await tx
    .insertInto("note_bodies")
    .values({ uuid, title, text: "", headings: "", word_count: 0, size_bytes: 0, updated_at: createdAt })
    .onConflict((oc) => oc.column("uuid").doUpdateSet({ title }))
    .execute();
}
