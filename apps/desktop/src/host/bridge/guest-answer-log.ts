import type { Kysely } from "kysely";
import type { LocalSchema } from "../store/local-schema";

/**
 * running       → the runtime has it (the row is written first: a message is taken once);
 * answered      → the server took the reply and gave it to the guest;
 * not_delivered → the server refused the reply (the wait ran out, the link is gone) or the message
 *                 stopped waiting while the runtime worked; the reason says which;
 * failed        → the runtime failed; interrupted → the app stopped while it ran.
 */
export type GuestAnswerState = "running" | "answered" | "not_delivered" | "failed" | "interrupted";

export interface GuestAnswerEntry {
  readonly serverUrl: string;
  readonly messageId: number;
  readonly linkLabel: string;
  readonly guestName: string | null;
  readonly question: string;
  readonly state: GuestAnswerState;
  readonly reason: string | null;
  readonly deniedTools: readonly string[];
  readonly receivedAt: string;
  readonly updatedAt: string;
}

/**
 * What this computer did with guest messages (the `bridge_guest_answers` table): the durable
 * record that makes answering at most once. {@link take} inserts before the runtime starts and
 * answers false when the message was taken before, by this launch or an earlier one.
 */
export class GuestAnswerLog {
  constructor(private readonly db: Kysely<LocalSchema>) {}

  async take(entry: {
    serverUrl: string;
    messageId: number;
    linkLabel: string;
    guestName: string | null;
    question: string;
  }): Promise<boolean> {
    const now = new Date().toISOString();
    const result = await this.db
      .insertInto("bridge_guest_answers")
      .values({
        server_url: entry.serverUrl,
        message_id: entry.messageId,
        link_label: entry.linkLabel,
        guest_name: entry.guestName,
        question: entry.question,
        state: "running",
        reason: null,
        denied_tools: "[]",
        received_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.columns(["server_url", "message_id"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Whether the message was taken already (a cheap check before building a prompt). */
  async taken(serverUrl: string, messageId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom("bridge_guest_answers")
      .select("message_id")
      .where("server_url", "=", serverUrl)
      .where("message_id", "=", messageId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async finish(
    serverUrl: string,
    messageId: number,
    state: Exclude<GuestAnswerState, "running">,
    reason: string | null,
    deniedTools: readonly string[],
  ) {
    await this.db
      .updateTable("bridge_guest_answers")
      .set({ state, reason, denied_tools: JSON.stringify(deniedTools), updated_at: new Date().toISOString() })
      .where("server_url", "=", serverUrl)
      .where("message_id", "=", messageId)
      .execute();
  }

  /** Runs a previous launch left unfinished (it crashed): never run again (the server's agent answers the guest after the wait). */
  async markInterrupted(): Promise<number> {
    const result = await this.db
      .updateTable("bridge_guest_answers")
      .set({ state: "interrupted", reason: "the app stopped while the runtime worked on it", updated_at: new Date().toISOString() })
      .where("state", "=", "running")
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async runningCount(): Promise<number> {
    const row = await this.db
      .selectFrom("bridge_guest_answers")
      .select((eb) => eb.fn.countAll<number>().as("count"))
      .where("state", "=", "running")
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** The latest entries, newest first (merged into the owner's activity log). */
  async recent(limit: number): Promise<GuestAnswerEntry[]> {
    const rows = await this.db
      .selectFrom("bridge_guest_answers")
      .selectAll()
      .orderBy("received_at", "desc")
      .orderBy("message_id", "desc")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      serverUrl: row.server_url,
      messageId: Number(row.message_id),
      linkLabel: row.link_label,
      guestName: row.guest_name,
      question: row.question,
      state: row.state as GuestAnswerState,
      reason: row.reason,
      deniedTools: parseNames(row.denied_tools),
      receivedAt: row.received_at,
      updatedAt: row.updated_at,
    }));
  }
}

function parseNames(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((name): name is string => typeof name === "string") : [];
  } catch {
    return [];
  }
}
