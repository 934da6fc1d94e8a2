import type { Generated } from "kysely";

/**
 * Tables as Kysely sees them. Timestamps are ISO 8601 strings (they sort correctly as text and
 * read the same from SQLite and PostgreSQL); flags are nullable timestamps, never booleans,
 * because the two dialects disagree on how booleans come back.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  name: string | null;
  email: string | null;
  created_at: string;
}

export interface ApiKeysTable {
  /** The public part of the key, shown by `keys create`, used by `keys revoke`. */
  id: string;
  user_id: number;
  /** SHA-256 of the secret part, hex. */
  secret_hash: string;
  label: string | null;
  /** JSON array of scope strings. */
  scopes: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface FoldersTable {
  id: Generated<number>;
  /** Stable identity for the folder inside the workspace document (notes issue). */
  uuid: string;
  owner_id: number;
  parent_id: number | null;
  /** parent_id, or 0 for the root: lets one unique index cover root folders too. */
  parent_key: number;
  name: string;
  /** Case- and normalisation-folded name; unique among siblings. */
  name_key: string;
  icon: string | null;
  created_at: string;
  updated_at: string;
}

/** Yjs documents by name, each as one merged update (its full state). */
export interface DocumentsTable {
  name: string;
  state: Uint8Array;
  updated_at: string;
}

export interface NotesTable {
  id: Generated<number>;
  uuid: string;
  owner_id: number;
  folder_id: number | null;
  title: string;
  /** 0 or 1. */
  pinned: number;
  /** JSON array of strings. */
  tags: string;
  created_at: string;
  updated_at: string;
}

export interface NoteBodiesTable {
  uuid: string;
  /** The note's title, copied from the workspace view so one row holds everything search indexes. */
  title: Generated<string>;
  text: string;
  word_count: number;
  size_bytes: number;
  updated_at: string;
}

export interface SnapshotsTable {
  /** The legacy `versionId`. */
  id: Generated<number>;
  note_uuid: string;
  owner_id: number;
  /** 1, 2, 3… per note: the preferred way to address a snapshot. */
  seq: number;
  label: string | null;
  /** The note document's full state when the snapshot was taken. */
  state: Uint8Array;
  word_count: number;
  created_at: string;
}

export interface FolderSharesTable {
  folder_uuid: string;
  owner_id: number;
  grantee_id: number;
  role: "viewer" | "editor";
  created_at: string;
}

export interface TodosTable {
  id: Generated<number>;
  uuid: string;
  owner_id: number;
  title: string;
  description: string;
  search_text: string;
  /** YYYY-MM-DD */
  due_date: string | null;
  priority: number | null;
  /** 0 or 1. */
  completed: number;
  completed_at: string | null;
  /** JSON array of {title, completed}. */
  steps: string;
  created_at: string;
  updated_at: string;
}

export interface Schema {
  users: UsersTable;
  api_keys: ApiKeysTable;
  folders: FoldersTable;
  documents: DocumentsTable;
  notes: NotesTable;
  note_bodies: NoteBodiesTable;
  snapshots: SnapshotsTable;
  folder_shares: FolderSharesTable;
  todos: TodosTable;
}
