import { countWords, jsonHeadings, jsonToText, readNoteBody } from "@tandem/core";
import type { Kysely } from "kysely";
import type * as Y from "yjs";
import { nowIso } from "../clock";
import type { Schema } from "../db/schema";

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
