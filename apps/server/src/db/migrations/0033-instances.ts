import type { Kysely } from "kysely";

/**
 * Server instances on this database (issue 24, docs/scaling.md#instances-and-leases): each running
 * instance holds a row it renews; a row whose `expires_at` has passed belongs to an instance that
 * died without removing it. `redis_prefix` is the Redis prefix the instance relays documents
 * through, or null without Redis: an instance refuses to start beside a live one unless both have
 * Redis with the same prefix. `pid_space` names the host and its process-id namespace (containers
 * sharing a host name have their own): only there does `pid` say whether the process still runs. Times are ISO 8601 (UTC), compared as text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("server_instances")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("host", "text", (c) => c.notNull())
    .addColumn("pid", "integer", (c) => c.notNull())
    .addColumn("pid_space", "text", (c) => c.notNull())
    .addColumn("redis_prefix", "text")
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("renewed_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .execute();
}
