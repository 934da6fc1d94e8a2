import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Raw memory (preview, docs/raw-memory.md): end-to-end encrypted captures of local agent sessions.
 * The server holds public keys, wrapped keys and ciphertext only.
 *
 * - `raw_memory_devices`: a collector device, by the id it chose (unique over every account, so a
 *   device id enrolled by one account is refused to another), with its X25519 public key.
 * - `raw_memory_keys`: one row per account key version and recipient (a device id or `recovery`):
 *   the version's 32-byte key wrapped for that recipient. `raw_memory_accounts` holds the current
 *   version and the recovery code's public key and scrypt parameters.
 * - `raw_memory_records`: one encrypted session. `id` is the server's order (the listing's cursor);
 *   `(owner_id, record_id)` is the client's idempotency key.
 */
export async function up(db: Kysely<unknown>, context: MigrationContext): Promise<void> {
  await db.schema
    .createTable("raw_memory_accounts")
    .addColumn("owner_id", "bigint", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    .addColumn("current_version", "integer", (c) => c.notNull())
    .addColumn("recovery_public_key", "text", (c) => c.notNull())
    .addColumn("recovery_salt", "text", (c) => c.notNull())
    .addColumn("recovery_scrypt", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("raw_memory_devices")
    .addColumn("device_id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("public_key", "text", (c) => c.notNull())
    .addColumn("enrolled_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("raw_memory_devices_by_owner").on("raw_memory_devices").column("owner_id").execute();

  await db.schema
    .createTable("raw_memory_keys")
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("key_version", "integer", (c) => c.notNull())
    .addColumn("recipient", "text", (c) => c.notNull())
    .addColumn("wrapped", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("raw_memory_keys_pk", ["owner_id", "key_version", "recipient"])
    .execute();

  await context
    .addIdColumn(db.schema.createTable("raw_memory_records"))
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("record_id", "text", (c) => c.notNull())
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("runtime", "text", (c) => c.notNull())
    .addColumn("session_id_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("key_version", "integer", (c) => c.notNull())
    .addColumn("alg", "text", (c) => c.notNull())
    .addColumn("nonce", "text", (c) => c.notNull())
    .addColumn("ciphertext", context.binaryType, (c) => c.notNull())
    .addColumn("plaintext_bytes", "bigint", (c) => c.notNull())
    .addColumn("stored_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("raw_memory_records_by_client_id")
    .on("raw_memory_records")
    .columns(["owner_id", "record_id"])
    .unique()
    .execute();
  await db.schema.createIndex("raw_memory_records_by_device").on("raw_memory_records").columns(["device_id", "id"]).execute();
}
