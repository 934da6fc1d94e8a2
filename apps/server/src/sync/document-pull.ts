import { parseDocName } from "@tandem/core";
import type { Kysely } from "kysely";
import * as Y from "yjs";
import type { Principal } from "../auth/principal";
import type { Schema } from "../db/schema";
import { badRequest } from "../http/errors";
import { credentialAccess } from "./credential-access";

/**
 * Stored bytes one pull reads and answers at most: the response, and the memory it takes, stay small
 * whatever the documents weigh. A document that does not fit is left to sync, which has its own bounds.
 */
export const PULL_RESPONSE_BUDGET_BYTES = 8 * 1024 * 1024;

export interface PullRequest {
  readonly name: string;
  readonly stateVector?: string | undefined;
}

export interface PulledDocument {
  readonly name: string;
  readonly update: string;
  readonly stateVector: string;
}

export interface PullAnswer {
  readonly documents: PulledDocument[];
  readonly notServed: string[];
}

/** Where a pull reads documents: the live copy when sync has the document open (it may be ahead of storage). */
export interface PullSource {
  readonly db: Kysely<Schema>;
  liveDocument(name: string): Y.Doc | undefined;
}

const EMPTY_STATE_VECTOR = Y.encodeStateVector(new Y.Doc());
const EMPTY_UPDATE = Y.encodeStateAsUpdate(new Y.Doc());

function decodeStateVector(name: string, base64: string | undefined): Uint8Array {
  if (base64 === undefined) return EMPTY_STATE_VECTOR;
  const bytes = new Uint8Array(Buffer.from(base64, "base64"));
  try {
    Y.decodeStateVector(bytes);
  } catch {
    throw badRequest("invalid_state_vector", `The state vector of ${name} is not a Yjs state vector`);
  }
  return bytes;
}

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

/**
 * Answers, for each of the caller's own note documents asked for, what the server holds beyond the
 * caller's state vector, and the server's state vector: the first half of a sync exchange for many
 * closed notes at once. Over sync each note is authenticated, loaded, diffed and unloaded on its own;
 * here it is one ownership query and one read of stored bytes per request, which is what lets a
 * client replicate tens of thousands of notes in seconds (docs/sync.md).
 *
 * It serves only what the caller owns and their key may read (the same rule as sync's for one's own
 * notes); shared notes, notes nobody owns yet, and anything else go to `notServed` for sync to
 * decide, so no access rule lives in two places. A note the server has never stored is served empty.
 */
export async function pullDocuments(source: PullSource, principal: Principal, requests: readonly PullRequest[]): Promise<PullAnswer> {
  const notServed: string[] = [];
  const wanted = new Map<string, { uuid: string; stateVector: Uint8Array }>();
  for (const request of requests) {
    const ref = parseDocName(request.name);
    const stateVector = decodeStateVector(request.name, request.stateVector);
    if (ref?.kind !== "note" || credentialAccess(principal, request.name) === null || wanted.has(request.name)) {
      notServed.push(request.name);
      continue;
    }
    wanted.set(request.name, { uuid: ref.uuid, stateVector });
  }
  const owned = await ownedAmong(
    source.db,
    principal.userId,
    [...wanted.values()].map((entry) => entry.uuid),
  );

  // What each document will cost, before reading any state: sizes from storage, live copies encoded.
  let budget = PULL_RESPONSE_BUDGET_BYTES;
  const live = new Map<string, Y.Doc>();
  const stored: string[] = [];
  for (const [name, entry] of wanted) {
    if (!owned.has(entry.uuid)) continue;
    const doc = source.liveDocument(name);
    if (doc) live.set(name, doc);
    else stored.push(name);
  }
  const sizes = await storedSizes(source.db, stored);
  const toRead = stored.filter((name) => {
    const size = sizes.get(name);
    if (size === undefined || size > budget) return false;
    budget -= size;
    return true;
  });
  const states = new Map<string, Uint8Array>();
  if (toRead.length > 0) {
    const rows = await source.db.selectFrom("documents").select(["name", "state"]).where("name", "in", toRead).execute();
    for (const row of rows) states.set(row.name, new Uint8Array(row.state));
  }

  const documents: PulledDocument[] = [];
  for (const [name, { uuid, stateVector }] of wanted) {
    let served: { update: Uint8Array; stateVector: Uint8Array } | undefined;
    try {
      const doc = live.get(name);
      const state = states.get(name);
      if (!owned.has(uuid)) served = undefined;
      else if (doc) {
        const update = Y.encodeStateAsUpdate(doc, stateVector);
        if (update.byteLength <= budget) {
          budget -= update.byteLength;
          served = { update, stateVector: Y.encodeStateVector(doc) };
        }
      } else if (state) served = { update: Y.diffUpdate(state, stateVector), stateVector: Y.encodeStateVectorFromUpdate(state) };
      // Never stored: the server's copy is empty. (Stored but over the budget: left to sync.)
      else if (!sizes.has(name)) served = { update: EMPTY_UPDATE, stateVector: EMPTY_STATE_VECTOR };
    } catch {
      // A stored state Yjs cannot read: sync repairs it when it loads the document.
      served = undefined;
    }
    if (served) documents.push({ name, update: toBase64(served.update), stateVector: toBase64(served.stateVector) });
    else notServed.push(name);
  }
  return { documents, notServed };
}

async function ownedAmong(db: Kysely<Schema>, userId: number, uuids: readonly string[]): Promise<Set<string>> {
  if (uuids.length === 0) return new Set();
  const rows = await db.selectFrom("note_owners").select("uuid").where("uuid", "in", uuids).where("owner_id", "=", userId).execute();
  return new Set(rows.map((row) => row.uuid));
}

async function storedSizes(db: Kysely<Schema>, names: readonly string[]): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .selectFrom("documents")
    .select((eb) => ["name", eb.fn<number>("length", ["state"]).as("size")])
    .where("name", "in", names)
    .execute();
  return new Map(rows.map((row) => [row.name, Number(row.size)]));
}
