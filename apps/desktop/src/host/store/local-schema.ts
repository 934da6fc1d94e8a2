/**
 * The desktop's local database. Documents are the truth (Yjs states, as on the server); the rest
 * is the host's own bookkeeping. Timestamps are ISO strings; flags 0/1.
 */
export interface LocalDocumentsTable {
  /**
   * Whose copy this is: `<server origin>#<userId>`. Every row belongs to one account, so one
   * user's documents are never served to, or replicated for, another (note names carry no user).
   */
  account: string;
  name: string;
  /** The document's full state as one Yjs update. */
  state: Uint8Array;
  /** 1 while it holds local changes the server has not confirmed (the quit warning counts these). */
  unsynced: number;
  updated_at: string;
}

export interface LocalSettingsTable {
  key: string;
  value: string;
}

/** Messages the bridge received, kept until the runtime has finished with them. */
export interface BridgeSpoolTable {
  message_id: string;
  delivery_id: string;
  communication_session_id: string;
  /** The `message.dispatch` envelope as JSON. */
  envelope: string;
  /** received → validated → running → done | rejected | failed */
  state: string;
  reason: string | null;
  received_at: string;
  updated_at: string;
}

/** Guest messages of share links this computer took to answer (one row per server message, written before the run). */
export interface BridgeGuestAnswersTable {
  server_url: string;
  message_id: number;
  link_label: string;
  guest_name: string | null;
  /** The guest's message (at most 4,000 characters on the server), for the activity log. */
  question: string;
  /** running → answered | not_delivered | failed | interrupted */
  state: string;
  reason: string | null;
  /** Tool names the runtime asked for and was refused, as a JSON array. */
  denied_tools: string;
  received_at: string;
  updated_at: string;
}

/** An unsent message (drafts/drafts.ts): kept per account, section and conversation until it is sent. */
export interface DraftsTable {
  /** `<server origin>#<userId>`, as for documents. */
  account: string;
  /** `inbox` or `agent`. */
  scope: string;
  /** The conversation's id, or `new` for a message not yet in one. */
  conversation: string;
  text: string;
  /** The page's count when it wrote this text: an older write arriving late does not replace a newer one. */
  revision: number;
  updated_at: string;
}

export interface LocalSchema {
  documents: LocalDocumentsTable;
  settings: LocalSettingsTable;
  bridge_spool: BridgeSpoolTable;
  bridge_guest_answers: BridgeGuestAnswersTable;
  drafts: DraftsTable;
}
