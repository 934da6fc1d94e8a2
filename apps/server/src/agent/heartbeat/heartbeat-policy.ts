import type { HeartbeatTier, ToolPolicyMap } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import type { HeartbeatPoliciesTable, Schema } from "../../db/schema";
import type { PolicySetter } from "./heartbeat-credential";
import { firstRunAt, type QuietHours } from "./heartbeat-schedule";

/** A user without a policy row: MESSAGES, schedule off (hourly, quiet 22:00–07:00 UTC when switched on). */
const DEFAULTS = {
  tier: "MESSAGES" as HeartbeatTier,
  enabled: false,
  everyMinutes: 60,
  quietHours: { start: "22:00", end: "07:00" } as QuietHours | null,
  timezone: "UTC",
};

export interface Schedule {
  readonly enabled: boolean;
  readonly everyMinutes: number;
  readonly quietHours: QuietHours | null;
  readonly timezone: string;
  readonly nextRunAt: string | null;
}

export interface Policy {
  readonly tier: HeartbeatTier;
  readonly schedule: Schedule;
  /** The heartbeat thread, once a message was delivered. */
  readonly conversationId: number | null;
  /** Per-tool decisions for heartbeat runs (`ask` pauses the run for the owner); null: none. */
  readonly toolPolicy: ToolPolicyMap | null;
}

export interface PolicyUpdate {
  readonly tier?: HeartbeatTier;
  readonly toolPolicy?: ToolPolicyMap | null;
  readonly schedule?: {
    readonly enabled?: boolean;
    readonly everyMinutes?: number;
    readonly quietHours?: QuietHours | null;
    readonly timezone?: string;
  };
}

type PolicyRow = Selectable<HeartbeatPoliciesTable>;

function fromRow(row: PolicyRow | undefined): Policy {
  if (!row) {
    const { tier, enabled, everyMinutes, quietHours, timezone } = DEFAULTS;
    return { tier, schedule: { enabled, everyMinutes, quietHours, timezone, nextRunAt: null }, conversationId: null, toolPolicy: null };
  }
  return {
    tier: row.tier,
    schedule: {
      enabled: row.schedule_enabled === 1,
      everyMinutes: row.every_minutes,
      quietHours: row.quiet_start && row.quiet_end ? { start: row.quiet_start, end: row.quiet_end } : null,
      timezone: row.timezone,
      nextRunAt: row.next_run_at,
    },
    conversationId: row.conversation_id === null ? null : Number(row.conversation_id),
    toolPolicy: row.tool_policy ? (JSON.parse(row.tool_policy) as ToolPolicyMap) : null,
  };
}

/** The policy as the API shows it (the thread is told by the status). */
export function policyJson(policy: Policy) {
  return { tier: policy.tier, schedule: policy.schedule, ...(policy.toolPolicy ? { toolPolicy: policy.toolPolicy } : {}) };
}

export async function readPolicy(db: Kysely<Schema>, userId: number): Promise<Policy> {
  return fromRow(await db.selectFrom("heartbeat_policies").selectAll().where("user_id", "=", userId).executeTakeFirst());
}

const sameQuiet = (a: QuietHours | null, b: QuietHours | null) => a?.start === b?.start && a?.end === b?.end;

/**
 * Applies an update over the stored policy (or the defaults). Switching the schedule on, or
 * changing its interval, quiet hours or time zone, sets the next run one interval from `now`;
 * switching it off clears it; a tier change alone leaves it as it is. `setBy` is remembered as the
 * policy's setter: scheduled runs are capped to its scopes (see `scheduledRunLimit`).
 */
export async function updatePolicy(
  db: Kysely<Schema>,
  userId: number,
  update: PolicyUpdate,
  now: Date,
  setBy: PolicySetter,
): Promise<Policy> {
  const current = await readPolicy(db, userId);
  const before = current.schedule;
  const given = update.schedule ?? {};
  const schedule = {
    enabled: given.enabled ?? before.enabled,
    everyMinutes: given.everyMinutes ?? before.everyMinutes,
    quietHours: given.quietHours === undefined ? before.quietHours : given.quietHours,
    timezone: given.timezone ?? before.timezone,
  };
  const changed =
    !before.enabled ||
    schedule.everyMinutes !== before.everyMinutes ||
    !sameQuiet(schedule.quietHours, before.quietHours) ||
    schedule.timezone !== before.timezone;
  const values = {
    tier: update.tier ?? current.tier,
    schedule_enabled: schedule.enabled ? 1 : 0,
    every_minutes: schedule.everyMinutes,
    quiet_start: schedule.quietHours?.start ?? null,
    quiet_end: schedule.quietHours?.end ?? null,
    timezone: schedule.timezone,
    updated_at: now.toISOString(),
    set_by_kind: setBy.kind,
    set_by_id: setBy.id,
    set_by_scopes: JSON.stringify([...setBy.scopes]),
    tool_policy:
      update.toolPolicy === undefined
        ? current.toolPolicy && JSON.stringify(current.toolPolicy)
        : update.toolPolicy && Object.keys(update.toolPolicy).length > 0
          ? JSON.stringify(update.toolPolicy)
          : null,
  };
  // An unchanged schedule keeps its next run untouched: writing back the value read above could undo
  // a scheduler's claim made in between, and that run would happen twice.
  const nextRunAt = !schedule.enabled ? null : changed ? firstRunAt(now, schedule).toISOString() : undefined;
  const withNext = nextRunAt === undefined ? values : { ...values, next_run_at: nextRunAt };
  await db
    .insertInto("heartbeat_policies")
    .values({ user_id: userId, next_run_at: nextRunAt ?? null, ...values })
    .onConflict((oc) => oc.column("user_id").doUpdateSet(withNext))
    .execute();
  return readPolicy(db, userId);
}

/**
 * Switches the schedule off because the credential that set it (`setById`) may no longer run it;
 * unless someone set the policy again meanwhile, which then stands.
 */
export async function stopSchedule(db: Kysely<Schema>, userId: number, setById: string | null, now: Date): Promise<void> {
  await db
    .updateTable("heartbeat_policies")
    .set({ schedule_enabled: 0, next_run_at: null, updated_at: now.toISOString() })
    .where("user_id", "=", userId)
    .where((eb) => (setById === null ? eb("set_by_id", "is", null) : eb("set_by_id", "=", setById)))
    .execute();
}

/** Remembers the owner's heartbeat thread. */
export async function setThread(db: Kysely<Schema>, userId: number, conversationId: number, now: Date): Promise<void> {
  const { tier, enabled, everyMinutes, quietHours, timezone } = DEFAULTS;
  await db
    .insertInto("heartbeat_policies")
    .values({
      user_id: userId,
      tier,
      schedule_enabled: enabled ? 1 : 0,
      every_minutes: everyMinutes,
      quiet_start: quietHours?.start ?? null,
      quiet_end: quietHours?.end ?? null,
      timezone,
      next_run_at: null,
      conversation_id: conversationId,
      updated_at: now.toISOString(),
    })
    .onConflict((oc) => oc.column("user_id").doUpdateSet({ conversation_id: conversationId }))
    .execute();
}
