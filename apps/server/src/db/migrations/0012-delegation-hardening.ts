import { type Kysely, sql } from "kysely";

const SESSION_COLUMNS = [
  "handle",
  "endpoint_id",
  "owner_id",
  "label",
  "state",
  "delivery_mode",
  "capabilities",
  "allow_inbound",
  "allow_mid_turn_steer",
  "workspace_boundary",
  "created_at",
  "updated_at",
] as const;

/**
 * Two holes of issue #10. Session handles were one namespace across every user (another user's
 * device could take a bridge's handle first, and learn that one existed); they are now keyed by
 * endpoint. SQLite cannot change a primary key in place, so the table is rebuilt, the same way on
 * both dialects. And a device-code pairing records where its request came from (client address
 * and user agent), which the approval page shows the owner.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("runtime_sessions_by_endpoint")
    .addColumn("handle", "text", (c) => c.notNull())
    .addColumn("endpoint_id", "text", (c) => c.notNull().references("runtime_endpoints.id").onDelete("cascade"))
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("label", "text")
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("delivery_mode", "text", (c) => c.notNull())
    .addColumn("capabilities", "text", (c) => c.notNull())
    .addColumn("allow_inbound", "integer", (c) => c.notNull())
    .addColumn("allow_mid_turn_steer", "integer", (c) => c.notNull())
    .addColumn("workspace_boundary", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    // Leading with the endpoint, so it also serves "the sessions of an endpoint".
    .addPrimaryKeyConstraint("runtime_sessions_by_endpoint_pk", ["endpoint_id", "handle"])
    .execute();
  const columns = sql.join(SESSION_COLUMNS.map((column) => sql.ref(column)));
  await sql`insert into runtime_sessions_by_endpoint (${columns}) select ${columns} from runtime_sessions`.execute(db);
  await db.schema.dropTable("runtime_sessions").execute();
  await db.schema.alterTable("runtime_sessions_by_endpoint").renameTo("runtime_sessions").execute();

  await db.schema.alterTable("device_pairings").addColumn("requester_address", "text").execute();
  await db.schema.alterTable("device_pairings").addColumn("requester_agent", "text").execute();
}
