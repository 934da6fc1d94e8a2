import { isIP } from "node:net";
import { type Kysely, sql } from "kysely";
import type { Clock } from "../clock";
import type { Schema, SignInCountsTable } from "../db/schema";

/**
 * Password sign-in limits (docs/oauth.md). Failures are counted per account and address, per
 * address, and per account, in the database, so every server instance agrees and a restart forgets
 * nothing. None of them lets someone else lock the real person out:
 *
 * - account + address: past the limit, that address waits for that account until the window ends;
 * - address (over all accounts): past the limit, that address waits, for every account it has not
 *   signed in to lately;
 * - account (from anywhere): past the limit the account is under attack, and an address it has not
 *   signed in from lately gets one attempt a minute. Its first attempt is never refused, so the
 *   real person on another address still signs in.
 *
 * An address that signed in to the account lately is spared the last two, and past the first is
 * only paced: it is never locked out of that account. A success clears that pair's count.
 */

const WINDOW_MS = 15 * 60_000;
/** The slowdown: the least time between two attempts of one address on an account under attack. */
const PACE_MS = 60_000;
/** How long a successful sign-in makes its address known to the account. */
const KNOWN_FOR_MS = 30 * 24 * 60 * 60_000;

export interface SignInLimitConfig {
  readonly signInFailuresPerAccountAddress: number;
  readonly signInFailuresPerAddress: number;
  readonly signInSlowdownAfter: number;
}

export interface SignInAttempt {
  /** The name as typed, trimmed and lowercased: unknown accounts are counted as known ones are. */
  readonly username: string;
  /** The account's id, when there is one by that name. */
  readonly userId: number | undefined;
  /** {@link addressKey} of the peer. */
  readonly address: string;
}

/**
 * The address failures are counted under: the socket's peer (no forwarded header is trusted), an
 * IPv4-mapped address as IPv4, and an IPv6 address as its /64, which one subscriber holds whole.
 */
export function addressKey(remote: string | undefined): string {
  const address = (remote ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
  if (isIP(address) !== 6) return address || "unknown";
  const groups = (part: string | undefined) =>
    part ? part.split(":").flatMap((group) => (group.includes(".") ? ["0", "0"] : [group])) : [];
  const [head, tail] = (address.split("%")[0] ?? "").split("::");
  const before = groups(head);
  const after = groups(tail);
  const full = [...before, ...Array<string>(Math.max(0, 8 - before.length - after.length)).fill("0"), ...after];
  return `${full
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

type Scope = SignInCountsTable["scope"];
type Count = Pick<SignInCountsTable, "count" | "window_started_at" | "previous_at">;

/** Thrown inside the admitting transaction so that a refused attempt counts nothing. */
class Refused extends Error {
  constructor(readonly untilMs: number) {
    super("sign-in attempt refused");
  }
}

const pairKey = (attempt: SignInAttempt) => `${attempt.address} ${attempt.username}`;
const windowEnd = (count: Count) => Date.parse(count.window_started_at) + WINDOW_MS;

export class SignInLimits {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly clock: Clock,
    private readonly config: SignInLimitConfig,
  ) {}

  /**
   * Counts an attempt before its password is checked (so concurrent guesses cannot slip past the
   * count): null when it may go on, else the seconds to wait, and then nothing is counted.
   */
  async admit(attempt: SignInAttempt): Promise<number | null> {
    const nowMs = this.clock.nowMs();
    try {
      await this.db.transaction().execute(async (tx) => {
        const pair = await bump(tx, "pair", pairKey(attempt), nowMs);
        const address = await bump(tx, "address", attempt.address, nowMs);
        const known = await this.#known(tx, attempt, nowMs);
        const pacedUntil = pair.previous_at === null ? 0 : Date.parse(pair.previous_at) + PACE_MS;
        const paced = pacedUntil > nowMs;
        if (pair.count > this.config.signInFailuresPerAccountAddress) {
          if (!known) throw new Refused(windowEnd(pair));
          if (paced) throw new Refused(pacedUntil);
        }
        if (known) return;
        if (address.count > this.config.signInFailuresPerAddress) throw new Refused(windowEnd(address));
        if (paced && (await current(tx, "account", attempt.username, nowMs)) >= this.config.signInSlowdownAfter) {
          throw new Refused(pacedUntil);
        }
      });
      return null;
    } catch (error) {
      if (error instanceof Refused) return Math.max(1, Math.ceil((error.untilMs - nowMs) / 1000));
      throw error;
    }
  }

  /** A wrong password (or no such account): the account's count, which only slows, never locks. */
  async failed(attempt: SignInAttempt): Promise<void> {
    await bump(this.db, "account", attempt.username, this.clock.nowMs());
  }

  /** A right password: the pair's count is cleared, the address's attempt given back, the address known. */
  async succeeded(attempt: SignInAttempt & { userId: number }): Promise<void> {
    const now = this.clock.iso();
    const count = sql.ref<number>("count");
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom("sign_in_counts").where("scope", "=", "pair").where("key", "=", pairKey(attempt)).execute();
      await tx
        .updateTable("sign_in_counts")
        .set({ count: sql<number>`case when ${count} > 0 then ${count} - 1 else 0 end` })
        .where("scope", "=", "address")
        .where("key", "=", attempt.address)
        .execute();
      await tx
        .insertInto("sign_in_addresses")
        .values({ user_id: attempt.userId, address: attempt.address, signed_in_at: now })
        .onConflict((oc) => oc.columns(["user_id", "address"]).doUpdateSet({ signed_in_at: now }))
        .execute();
    });
  }

  /** Maintenance: counts whose window and pace are over, and addresses no longer known. */
  async deleteExpired(): Promise<void> {
    const nowMs = this.clock.nowMs();
    await this.db
      .deleteFrom("sign_in_counts")
      .where("last_at", "<", new Date(nowMs - WINDOW_MS).toISOString())
      .execute();
    await this.db
      .deleteFrom("sign_in_addresses")
      .where("signed_in_at", "<", new Date(nowMs - KNOWN_FOR_MS).toISOString())
      .execute();
  }

  async #known(db: Kysely<Schema>, attempt: SignInAttempt, nowMs: number): Promise<boolean> {
    if (attempt.userId === undefined) return false;
    const row = await db
      .selectFrom("sign_in_addresses")
      .select("user_id")
      .where("user_id", "=", attempt.userId)
      .where("address", "=", attempt.address)
      .where("signed_in_at", ">=", new Date(nowMs - KNOWN_FOR_MS).toISOString())
      .executeTakeFirst();
    return row !== undefined;
  }
}

/**
 * Counts one more in a fixed window, atomically (an upsert; on PostgreSQL it also locks the row
 * for the rest of the transaction, so concurrent attempts count one after the other). Answers the
 * count after it, and the attempt counted before this one.
 */
function bump(db: Kysely<Schema>, scope: Scope, key: string, nowMs: number): Promise<Count> {
  const now = new Date(nowMs).toISOString();
  const stale = sql<boolean>`${sql.ref("sign_in_counts.window_started_at")} <= ${new Date(nowMs - WINDOW_MS).toISOString()}`;
  return db
    .insertInto("sign_in_counts")
    .values({ scope, key, count: 1, window_started_at: now, last_at: now, previous_at: null })
    .onConflict((oc) =>
      oc.columns(["scope", "key"]).doUpdateSet({
        count: sql<number>`case when ${stale} then 1 else ${sql.ref("sign_in_counts.count")} + 1 end`,
        window_started_at: sql<string>`case when ${stale} then ${now} else ${sql.ref("sign_in_counts.window_started_at")} end`,
        previous_at: sql<string>`${sql.ref("sign_in_counts.last_at")}`,
        last_at: now,
      }),
    )
    .returning(["count", "window_started_at", "previous_at"])
    .executeTakeFirstOrThrow();
}

/** The count in the current window (0 when there is none). */
async function current(db: Kysely<Schema>, scope: Scope, key: string, nowMs: number): Promise<number> {
  const row = await db
    .selectFrom("sign_in_counts")
    .select("count")
    .where("scope", "=", scope)
    .where("key", "=", key)
    .where("window_started_at", ">", new Date(nowMs - WINDOW_MS).toISOString())
    .executeTakeFirst();
  return row?.count ?? 0;
}
