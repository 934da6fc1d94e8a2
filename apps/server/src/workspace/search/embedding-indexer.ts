import { createHash } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { Schema } from "../../db/schema";
import type { Logger } from "../../logger";
import { type Embedder, encodeVector } from "./embedder";

/** Notes embedded per provider call; one call at a time, so the indexer never floods a provider. */
const BATCH_SIZE = 32;
/** The start of a note (title, then text) that is embedded: models take a few thousand tokens at most. */
const MAX_INPUT_CHARS = 6_000;

/**
 * Keeps `note_embeddings` in step with the note bodies, in the background: a pass embeds, a batch
 * at a time, every note whose title or text changed since its vector was computed (newest first),
 * and drops the vectors of bodies that are gone. Passes are asked for after view updates and at
 * start; writes never wait for one. A provider failure ends the pass; the next one starts when
 * the provider's pause is over. Several server processes may index at once: the last write wins,
 * with the same vector.
 */
export class EmbeddingIndexer {
  #running: Promise<void> | undefined;
  #again = false;
  #retry: NodeJS.Timeout | undefined;
  readonly #stop = new AbortController();

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly embedder: Embedder,
    private readonly logger: Logger,
  ) {}

  /** Asks for a pass; several asks while one runs make one more pass after it. */
  schedule(): void {
    if (this.#stop.signal.aborted) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#passes().finally(() => {
      this.#running = undefined;
    });
  }

  /** Stops asking the provider (an in-flight call is cancelled) and waits for the pass to end. */
  async stop(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#retry);
    await this.#running;
  }

  async #passes(): Promise<void> {
    do {
      this.#again = false;
      if (!this.embedder.available) {
        this.#retryLater();
        return;
      }
      try {
        await this.#pass();
      } catch (error) {
        if (this.#stop.signal.aborted) return;
        // The embedder has logged a provider failure and paused; anything else is ours to report.
        if (this.embedder.available) this.logger.error({ err: error }, "note embedding pass failed");
        this.#retryLater();
        return;
      }
    } while (this.#again && !this.#stop.signal.aborted);
  }

  #retryLater(): void {
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.schedule(), Math.max(this.embedder.pausedForMs, 1_000));
    this.#retry.unref();
  }

  async #pass(): Promise<void> {
    const model = this.embedder.modelId;
    // Vectors of another model (the setting changed) are never compared with this one's: drop them.
    await this.db.deleteFrom("note_embeddings").where("model", "<>", model).execute();
    await this.db
      .deleteFrom("note_embeddings")
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom("note_bodies").select("note_bodies.uuid").whereRef("note_bodies.uuid", "=", "note_embeddings.uuid"))),
      )
      .execute();
    while (!this.#stop.signal.aborted) {
      const stale = await this.db
        .selectFrom("note_bodies")
        .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
        .leftJoin("note_embeddings", (join) =>
          join.onRef("note_embeddings.uuid", "=", "note_bodies.uuid").on("note_embeddings.model", "=", model),
        )
        .select([
          "note_bodies.uuid",
          "note_bodies.title",
          "note_bodies.updated_at",
          "note_embeddings.digest",
          sql<string>`substr(note_bodies.text, 1, ${MAX_INPUT_CHARS})`.as("text"),
        ])
        .where((eb) =>
          eb.or([
            eb("note_embeddings.uuid", "is", null),
            eb("note_embeddings.body_updated_at", "<>", eb.ref("note_bodies.updated_at")),
            eb("note_embeddings.title", "<>", eb.ref("note_bodies.title")),
          ]),
        )
        .orderBy("note_bodies.updated_at", "desc")
        .orderBy("note_bodies.uuid")
        .limit(BATCH_SIZE)
        .execute();
      if (stale.length === 0) return;
      const notes = stale.map((row) => {
        const input = `${row.title}\n\n${row.text}`.slice(0, MAX_INPUT_CHARS).trim();
        const digest = createHash("sha256").update(input).digest("base64url");
        return {
          uuid: row.uuid,
          input,
          unchanged: digest === row.digest,
          values: { title: row.title, body_updated_at: row.updated_at, digest },
        };
      });
      // A view recomputed without a change keeps its vector; an empty note gets an empty one (it matches nothing).
      const toEmbed = notes.filter((note) => !note.unchanged && note.input !== "");
      const vectors =
        toEmbed.length > 0
          ? await this.embedder.embedDocuments(
              toEmbed.map((note) => note.input),
              this.#stop.signal,
            )
          : [];
      const embedded = new Map(toEmbed.map((note, i) => [note.uuid, vectors[i]]));
      await this.db.transaction().execute(async (tx) => {
        for (const { uuid, unchanged, values } of notes) {
          if (unchanged) {
            await tx.updateTable("note_embeddings").set(values).where("uuid", "=", uuid).where("model", "=", model).execute();
            continue;
          }
          const vector = embedded.get(uuid) ?? new Float32Array(0);
          const row = { ...values, dimensions: vector.length, vector: encodeVector(vector) };
          await tx
            .insertInto("note_embeddings")
            .values({ uuid, model, ...row })
            .onConflict((oc) => oc.columns(["uuid", "model"]).doUpdateSet(row))
            .execute();
        }
      });
    }
  }
}
