import { parseDocName, writeNoteBody } from "@tandem/core";
import type { JSONContent } from "@tiptap/core";
import { type Kysely, sql } from "kysely";
import * as Y from "yjs";
import type { Schema } from "../db/schema";
import { isStorageFailure } from "../db/storage-failure";
import { ApiError } from "../http/errors";

export type QuotaRefusal = "document_too_large" | "storage_quota_exceeded";

export interface QuotaLimits {
  maxDocumentBytes: number;
  userQuotaBytes: number;
}

/** How long a user's measured usage is trusted before it is summed from storage again. */
const USAGE_TTL_MS = 2000;

const MESSAGES: Record<QuotaRefusal, string> = {
  document_too_large: "The document would grow past the largest size this server stores",
  storage_quota_exceeded: "Your documents, snapshots and raw memory would grow past your storage quota",
};

/**
 * What a body adds to a note document at most: its size as a Yjs update of its own. Writing it
 * as a diff against the current body usually adds less.
 */
export function bodyBytes(body: JSONContent): number {
  const doc = new Y.Doc();
  writeNoteBody(doc, body);
  return Y.encodeStateAsUpdate(doc).length;
}

export function quotaError(refusal: QuotaRefusal): ApiError {
  return new ApiError(413, refusal, MESSAGES[refusal]);
}

/**
 * The per-document size limit and the per-user quota. A document's size is its stored state,
 * measured when it is loaded or stored, plus what sync clients have added since (each update's
 * length: an upper bound, as merged state is never larger than its updates). A user's usage is
 * every document they own (workspace, todos, their notes' bodies) plus their snapshots and raw memory
 * records' ciphertext, summed in
 * SQL and trusted for a moment, plus growth accepted since.
 */
export class StorageQuota {
  readonly #documentBytes = new Map<string, number>();
  /** Note owners of loaded documents, so that each sync update does not look its owner up again. */
  readonly #owners = new Map<string, number>();
  readonly #usage = new Map<number, { bytes: number; at: number }>();
  /** Users' usage sums under way: concurrent checks for one user share one (then the cached sum). */
  readonly #summing = new Map<number, Promise<number>>();

  constructor(
    private readonly db: Kysely<Schema>,
    readonly limits: QuotaLimits,
  ) {}

  /** Records a document's size as measured from its stored state. */
  measured(name: string, bytes: number): void {
    this.#documentBytes.set(name, bytes);
  }

  /** Forgets an unloaded document; its stored size is read again if needed. */
  forget(name: string): void {
    this.#documentBytes.delete(name);
    this.#owners.delete(name);
  }

  /** Counts growth accepted over sync until the next store measures it exactly. */
  grew(name: string, owner: number | undefined, bytes: number): void {
    const size = this.#documentBytes.get(name);
    if (size !== undefined) this.#documentBytes.set(name, size + bytes);
    const usage = owner === undefined ? undefined : this.#usage.get(owner);
    if (usage) usage.bytes += bytes;
  }

  /** Who a document's bytes count against: the workspace's or todo list's user, the note's owner. */
  async ownerOf(name: string): Promise<number | undefined> {
    const ref = parseDocName(name);
    if (ref === null) return undefined;
    if (ref.kind !== "note") return ref.userId;
    const known = this.#owners.get(name);
    if (known !== undefined) return known;
    const row = await this.db.selectFrom("notes").select("owner_id").where("uuid", "=", ref.uuid).executeTakeFirst();
    if (row && this.#documentBytes.has(name)) this.#owners.set(name, row.owner_id);
    return row?.owner_id;
  }

  /** Which limit adding `bytes` to the document would break, if any. */
  async refusal(name: string, owner: number | undefined, bytes: number): Promise<QuotaRefusal | undefined> {
    if ((await this.#documentSize(name)) + bytes > this.limits.maxDocumentBytes) return "document_too_large";
    if (owner !== undefined) return this.userRefusal(owner, bytes);
    return undefined;
  }

  /** Whether storing `bytes` more for the user would break their quota. */
  async userRefusal(owner: number, bytes: number): Promise<QuotaRefusal | undefined> {
    return (await this.#userBytes(owner)) + bytes > this.limits.userQuotaBytes ? "storage_quota_exceeded" : undefined;
  }

  /** A 413 if adding `bytes` to the document would break a limit (the owner defaults to the recorded one). */
  async assertRoom(name: string, bytes: number, owner?: number): Promise<void> {
    const refusal = await this.refusal(name, owner ?? (await this.ownerOf(name)), bytes);
    if (refusal) throw quotaError(refusal);
  }

  /** A 413 if storing `bytes` more for the user (a snapshot) would break their quota. */
  async assertUserRoom(owner: number, bytes: number): Promise<void> {
    const refusal = await this.userRefusal(owner, bytes);
    if (refusal) throw quotaError(refusal);
    const usage = this.#usage.get(owner);
    if (usage) usage.bytes += bytes;
  }

  async #documentSize(name: string): Promise<number> {
    const known = this.#documentBytes.get(name);
    if (known !== undefined) return known;
    const row = await this.db
      .selectFrom("documents")
      .select(sql<number>`length(state)`.as("bytes"))
      .where("name", "=", name)
      .executeTakeFirst();
    return Number(row?.bytes ?? 0);
  }

  async #userBytes(owner: number): Promise<number> {
    const cached = this.#usage.get(owner);
    if (cached && Date.now() - cached.at < USAGE_TTL_MS) return cached.bytes;
    let summing = this.#summing.get(owner);
    if (!summing) {
      summing = this.#sumUserBytes(owner).finally(() => this.#summing.delete(owner));
      this.#summing.set(owner, summing);
    }
    try {
      return await summing;
    } catch (error) {
      // The database unreachable: the last sum stands (growth since is counted by `grew`), so editors
      // of open documents keep editing through a brief outage instead of being sent away.
      if (cached && isStorageFailure(error)) return cached.bytes;
      throw error;
    }
  }

  async #sumUserBytes(owner: number): Promise<number> {
    const documents = await this.db
      .selectFrom("documents")
      .select(sql<number>`coalesce(sum(length(state)), 0)`.as("bytes"))
      .where((eb) =>
        eb.or([
          eb("name", "in", [`workspace:${owner}`, `todos:${owner}`]),
          eb("name", "in", eb.selectFrom("notes").select(sql<string>`'note:' || uuid`.as("name")).where("owner_id", "=", owner)),
        ]),
      )
      .executeTakeFirstOrThrow();
    const snapshots = await this.db
      .selectFrom("snapshots")
      .select(sql<number>`coalesce(sum(length(state)), 0)`.as("bytes"))
      .where("owner_id", "=", owner)
      .executeTakeFirstOrThrow();
    // Raw memory's ciphertext counts too (docs/raw-memory.md).
    const rawMemory = await this.db
      .selectFrom("raw_memory_records")
      .select(sql<number>`coalesce(sum(length(ciphertext)), 0)`.as("bytes"))
      .where("owner_id", "=", owner)
      .executeTakeFirstOrThrow();
    const bytes = Number(documents.bytes) + Number(snapshots.bytes) + Number(rawMemory.bytes);
    this.#usage.set(owner, { bytes, at: Date.now() });
    return bytes;
  }
}
