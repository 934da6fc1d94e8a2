import { MAX_PULL_STATE_VECTOR } from "@tandem/core";
import * as Y from "yjs";
import { isEmptyUpdate } from "./stored-exchange";

/** `POST /sync/pull`: what the server holds beyond each state vector sent, for many of the caller's notes at once. */
export type PullDocuments = (documents: { name: string; stateVector?: string }[]) => Promise<{
  documents: { name: string; update: string; stateVector: string }[];
  notServed: string[];
}>;

/**
 * What a pull made of one note:
 * - `pulled`: `update` holds what the server had beyond this machine's copy (null: nothing), and the
 *   server has every change this copy has, so the note is in step once the update is stored;
 * - `exchange`: it needs an exchange over sync (the server did not serve it, or lacks some of this copy).
 */
export type PullOutcome = { readonly kind: "pulled"; readonly update: Uint8Array | null } | { readonly kind: "exchange" };

const EXCHANGE: PullOutcome = { kind: "exchange" };

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
/** A Buffer is a Uint8Array: no second copy of each update. */
const fromBase64 = (text: string): Uint8Array => Buffer.from(text, "base64");

/** Whether a state vector has a client further along than another's (a struct the other lacks). */
function isAhead(ours: Map<number, number>, theirs: Map<number, number>): boolean {
  for (const [client, clock] of ours) if (clock > (theirs.get(client) ?? 0)) return true;
  return false;
}

/**
 * Pulls closed notes from the server in one request: each note's stored copy (undefined: none here)
 * becomes a state vector, and the server answers what it holds beyond it. The caller pulls only notes
 * without unconfirmed local changes, so the server already has every deletion this copy holds; the
 * state vectors are compared anyway, and a copy with something the server lacks goes to an exchange.
 * A request that fails throws: the caller falls back to exchanges for all of them.
 */
export async function pullNotes(
  pull: PullDocuments,
  stored: ReadonlyMap<string, Uint8Array | undefined>,
): Promise<Map<string, PullOutcome>> {
  const outcomes = new Map<string, PullOutcome>();
  const vectors = new Map<string, Map<number, number>>();
  const documents: { name: string; stateVector?: string }[] = [];
  for (const [name, state] of stored) {
    if (!state || isEmptyUpdate(state)) {
      documents.push({ name });
      continue;
    }
    const vector = Y.encodeStateVectorFromUpdate(state);
    const stateVector = toBase64(vector);
    // A note edited from very many sessions has a long state vector: sync takes it whatever its length.
    if (stateVector.length > MAX_PULL_STATE_VECTOR) {
      outcomes.set(name, EXCHANGE);
      continue;
    }
    vectors.set(name, Y.decodeStateVector(vector));
    documents.push({ name, stateVector });
  }
  if (documents.length === 0) return outcomes;
  const answer = await pull(documents);
  for (const served of answer.documents) {
    if (!stored.has(served.name)) continue;
    const ours = vectors.get(served.name);
    if (ours && isAhead(ours, Y.decodeStateVector(fromBase64(served.stateVector)))) {
      outcomes.set(served.name, EXCHANGE);
      continue;
    }
    const update = fromBase64(served.update);
    outcomes.set(served.name, { kind: "pulled", update: isEmptyUpdate(update) ? null : update });
  }
  // Anything not answered (not served, or missing from the answer) is exchanged over sync.
  for (const { name } of documents) if (!outcomes.has(name)) outcomes.set(name, EXCHANGE);
  return outcomes;
}
