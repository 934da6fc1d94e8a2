import { randomUUID } from "node:crypto";
import { readlinkSync } from "node:fs";
import { hostname } from "node:os";
import type { Kysely } from "kysely";
import type { ServerConfig } from "../config";
import type { Schema } from "../db/schema";
import type { Logger } from "../logger";

/** Another live instance on the same database, and this one could not work beside it: the start stops, in one line. */
export class InstanceConflictError extends Error {
  override name = "InstanceConflictError";
}

type InstanceRow = Schema["server_instances"];

/**
 * Where a process id means this process table: the host and, on Linux, the process-id namespace
 * (two containers can share a host name, never a namespace).
 */
function pidSpace(): string {
  try {
    return `${hostname()}/${readlinkSync("/proc/self/ns/pid")}`;
  } catch {
    return hostname();
  }
}

/** Whether a process of this process table still runs (signal 0 only asks). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * This instance's lease on the database (docs/scaling.md#instances-and-leases): a row in
 * `server_instances`, renewed every third of `instanceLeaseMs`, removed on a clean shutdown; an
 * instance that dies leaves a row that stops counting when it expires (or at once, when the next
 * instance starts on the same machine and finds its process gone).
 *
 * Instances on one database stay consistent only through Redis (documents, wake-ups, limits), so
 * an instance refuses to start beside a live one unless both relay through Redis with the same
 * prefix. The row is written before the others are read: two instances starting at once both see
 * each other, and both refuse, rather than both starting.
 */
export class InstanceLease {
  readonly id = randomUUID();
  readonly #host = hostname();
  readonly #pidSpace = pidSpace();
  readonly #startedAt = new Date().toISOString();
  #timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: Kysely<Schema>,
    private readonly config: Pick<ServerConfig, "redisUrl" | "redisPrefix" | "instanceLeaseMs">,
    private readonly logger: Logger,
  ) {}

  /** Registers this instance, or throws {@link InstanceConflictError} when another live instance forbids it. */
  static async acquire(db: Kysely<Schema>, config: InstanceLease["config"], logger: Logger): Promise<InstanceLease> {
    const lease = new InstanceLease(db, config, logger);
    const now = new Date();
    await db.deleteFrom("server_instances").where("expires_at", "<", now.toISOString()).execute();
    await db.insertInto("server_instances").values(lease.#row(now)).execute();
    const others = await db.selectFrom("server_instances").selectAll().where("id", "<>", lease.id).execute();
    for (const other of others) {
      const refusal = lease.#refusal(other);
      if (refusal === "dead") {
        await db.deleteFrom("server_instances").where("id", "=", other.id).execute();
      } else if (refusal) {
        await db.deleteFrom("server_instances").where("id", "=", lease.id).execute();
        throw new InstanceConflictError(refusal);
      }
    }
    lease.#timer = setInterval(() => void lease.#renew(), Math.floor(config.instanceLeaseMs / 3));
    lease.#timer.unref();
    return lease;
  }

  /** Removes the lease: the database no longer counts this instance as running. */
  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.db
      .deleteFrom("server_instances")
      .where("id", "=", this.id)
      .execute()
      .catch((error: unknown) => this.logger.warn({ err: error }, "could not remove this instance's lease; it expires by itself"));
  }

  #row(now: Date): InstanceRow {
    return {
      id: this.id,
      host: this.#host,
      pid: process.pid,
      pid_space: this.#pidSpace,
      redis_prefix: this.config.redisUrl ? this.config.redisPrefix : null,
      started_at: this.#startedAt,
      renewed_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.config.instanceLeaseMs).toISOString(),
    };
  }

  /** Why this instance cannot run beside `other`, "dead" when `other` is gone, undefined when both may run. */
  #refusal(other: InstanceRow): string | "dead" | undefined {
    if (other.pid_space === this.#pidSpace) {
      if (!processRuns(other.pid)) return "dead";
      // Several servers in one process are tests that start "instances" side by side on purpose;
      // a deployment runs one server per process (`tandem-server serve`).
      if (other.pid === process.pid) return undefined;
    }
    const who = `another Tandem instance (id ${other.id}, host ${other.host}, pid ${other.pid}) is running on this database`;
    const mine = this.config.redisUrl ? this.config.redisPrefix : null;
    if (mine === null) return `${who}; several instances need --redis-url (TANDEM_REDIS_URL), the same Redis for all`;
    if (other.redis_prefix === null) return `${who} without Redis; restart it with --redis-url (TANDEM_REDIS_URL), the same Redis for all`;
    if (other.redis_prefix !== mine) {
      return `${who} with Redis prefix "${other.redis_prefix}", this one "${mine}"; every instance needs the same TANDEM_REDIS_PREFIX`;
    }
    return undefined;
  }

  /** Extends the lease; writes it again if it was removed meanwhile (expired while the database was away). */
  async #renew(): Promise<void> {
    const now = new Date();
    const row = this.#row(now);
    try {
      const renewed = await this.db
        .updateTable("server_instances")
        .set({ renewed_at: row.renewed_at, expires_at: row.expires_at })
        .where("id", "=", this.id)
        .executeTakeFirst();
      if (Number(renewed.numUpdatedRows) === 0) await this.db.insertInto("server_instances").values(row).execute();
    } catch (error) {
      this.logger.warn({ err: error }, "could not renew this instance's lease");
    }
  }
}
