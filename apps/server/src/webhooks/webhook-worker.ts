// The webhook outbox's sending side. Due deliveries are claimed with a lease in one UPDATE whose
// WHERE requires the previous lease to be over: on PostgreSQL a second instance's UPDATE waits for
// the first's row lock and then re-checks that WHERE against the new row, so it skips the row; on
// SQLite writers take turns. A holder that dies leaves a lease that runs out, and the row comes
// back: nothing is lost, and a row is never held by two at once. (A receiver can still see one
// webhook-id twice, when an instance dies after the receiver answered and before the answer was
// recorded: Standard Webhooks' receivers deduplicate by webhook-id.)

import { randomInt } from "node:crypto";
import type { Selectable } from "kysely";
import { Webhook } from "standardwebhooks";
import { AddressRefused } from "../agent/tools/mcp/address-guard";
import { type FetchLike, guardedFetch } from "../agent/tools/mcp/guarded-fetch";
import type { AppContext } from "../context";
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from "../db/schema";
import { newId } from "../ids";
import { onWebhookEnqueued } from "./webhook-outbox";
import { endpointSecrets } from "./webhook-secrets";

type DeliveryRow = Selectable<WebhookDeliveriesTable>;
type EndpointRow = Selectable<WebhookEndpointsTable>;

/** An endpoint failing without a success for this long is disabled (and its owner told). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;
/** Longest Retry-After honoured; a longer one waits this long. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
/** Deliveries one worker has in flight at most. */
const BATCH = 50;
/** The lease outlives the longest attempt by this much, so a slow attempt is never taken over. */
const LEASE_MARGIN_MS = 30_000;

/** The user-stream event telling an owner an endpoint was disabled. */
export const WEBHOOK_DISABLED_EVENT = "webhook.disabled";

interface AttemptOutcome {
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly retryAfterMs: number | null;
  readonly durationMs: number;
}

interface Outcome {
  readonly delivery: DeliveryRow;
  readonly endpoint: EndpointRow | undefined;
  readonly outcome: AttemptOutcome | "shutdown" | "disabled";
}

/** Retry-After as seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  const seconds = /^\s*(\d+)\s*$/.exec(header);
  const ms = seconds ? Number(seconds[1]) * 1000 : Date.parse(header) - now;
  if (!Number.isFinite(ms)) return null;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** Up to 10% more than `ms`, so endpoints failing together do not all retry in the same instant. */
function withJitter(ms: number): number {
  return ms + randomInt(0, Math.max(1, Math.floor(ms / 10)));
}

function errorText(error: unknown): string {
  if (error instanceof AddressRefused) return `address refused: ${error.message}`;
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return (cause ? `${message} (${cause})` : message).slice(0, 500);
}

export class WebhookWorker {
  readonly #app: AppContext;
  readonly #fetch: FetchLike;
  readonly #shutdown = new AbortController();
  #running: Promise<void> | undefined;
  #again = false;
  /** Attempts sent or being recorded; claims never take more than {@link BATCH} minus these. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Outcomes waiting for the next recording transaction (group commit). */
  #unrecorded: Outcome[] = [];
  #recording: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(app: AppContext) {
    this.#app = app;
    this.#fetch = guardedFetch({
      allowPrivate: app.config.allowPrivateWebhooks,
      maxResponseBytes: 64 * 1024,
      headersTimeoutMs: app.config.webhookTimeoutMs,
      maxRedirects: 0,
    });
  }

  start(): void {
    this.#unsubscribe = onWebhookEnqueued(() => this.wake());
    this.#timer = setInterval(() => this.wake(), this.#app.config.webhookPollMs);
    this.#timer.unref();
    this.wake();
  }

  /** Looks for due deliveries now (or right after the pass under way). */
  wake(): void {
    if (this.#shutdown.signal.aborted) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#drain()
      .catch((error: unknown) => this.#app.logger.error({ err: error }, "webhook worker pass failed"))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Stops claiming; attempts under way are cut short and their deliveries handed back at once. */
  async stop(): Promise<void> {
    this.#shutdown.abort();
    this.#unsubscribe?.();
    clearInterval(this.#timer);
    await this.#running;
    await Promise.all(this.#inFlight);
  }

  /**
   * Claims as many due deliveries as there is room for and sends each on its own: a slow receiver
   * holds its own slot, never the others'. Finished attempts free their slot and wake the worker.
   */
  async #drain(): Promise<void> {
    for (;;) {
      const room = BATCH - this.#inFlight.size;
      if (room <= 0 || this.#shutdown.signal.aborted) return;
      const claimed = await this.#claim(room);
      if (claimed.length === 0) return;
      const endpointIds = [...new Set(claimed.map((delivery) => delivery.endpoint_id))];
      const endpoints = new Map(
        (await this.#app.db.selectFrom("webhook_endpoints").selectAll().where("id", "in", endpointIds).execute()).map((row) => [
          row.id,
          row,
        ]),
      );
      for (const delivery of claimed) {
        const attempt = this.#attempt(delivery, endpoints.get(delivery.endpoint_id)).finally(() => {
          this.#inFlight.delete(attempt);
          // Claim again once half the slots are free: one claim per freed slot would be a write each.
          if (this.#inFlight.size <= BATCH / 2) this.wake();
        });
        this.#inFlight.add(attempt);
      }
      if (claimed.length < room) return;
    }
  }

  /** One attempt, recorded with whatever else finished meanwhile. */
  async #attempt(delivery: DeliveryRow, endpoint: EndpointRow | undefined): Promise<void> {
    // Deleted meanwhile: its deliveries went with it. Disabled: ends without a try.
    const outcome = endpoint?.status !== "enabled" ? ("disabled" as const) : await this.#send(endpoint, delivery);
    this.#unrecorded.push({ delivery, endpoint, outcome });
    await this.#flush();
  }

  /** Records every outcome waiting, in one transaction at a time. */
  async #flush(): Promise<void> {
    while (this.#recording) await this.#recording.catch(() => {});
    if (this.#unrecorded.length === 0) return;
    const batch = this.#unrecorded;
    this.#unrecorded = [];
    this.#recording = this.#record(batch)
      .catch((error: unknown) => this.#app.logger.error({ err: error }, "webhook outcomes not recorded; their leases will run out"))
      .finally(() => {
        this.#recording = undefined;
      });
    await this.#recording;
  }

  async #claim(limit: number): Promise<DeliveryRow[]> {
    const { db, clock, config } = this.#app;
    const now = clock.iso();
    const until = new Date(clock.now().getTime() + config.webhookTimeoutMs + LEASE_MARGIN_MS).toISOString();
    const due = db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("status", "=", "pending")
      .where("next_attempt_at", "<=", now)
      .where((eb) => eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<", now)]))
      .orderBy("next_attempt_at")
      .limit(limit);
    return db
      .updateTable("webhook_deliveries")
      .set({ lease_token: newId("lease"), lease_expires_at: until })
      .where("id", "in", due)
      .where("status", "=", "pending")
      .where((eb) => eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<", now)]))
      .returningAll()
      .execute();
  }

  async #send(endpoint: EndpointRow, delivery: DeliveryRow): Promise<AttemptOutcome | "shutdown"> {
    const { secrets, clock, config } = this.#app;
    const started = performance.now();
    // The receiver checks the timestamp against its own clock: wall time, not the server's test clock.
    const sentAt = new Date();
    const signature = endpointSecrets(secrets, endpoint, clock.now())
      .map((secret) => new Webhook(secret).sign(delivery.id, sentAt, delivery.payload))
      .join(" ");
    const signal = AbortSignal.any([AbortSignal.timeout(config.webhookTimeoutMs), this.#shutdown.signal]);
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const response = await this.#fetch(endpoint.url, {
        method: "POST",
        redirect: "manual",
        signal,
        headers: {
          "content-type": "application/json",
          "user-agent": "Tandem-Webhooks/1.0",
          "webhook-id": delivery.id,
          "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
          "webhook-signature": signature,
        },
        body: delivery.payload,
      });
      await response.body?.cancel().catch(() => {});
      const statusCode = response.status;
      if (statusCode >= 200 && statusCode < 300) return { statusCode, error: null, retryAfterMs: null, durationMs: elapsed() };
      const error =
        statusCode >= 300 && statusCode < 400
          ? `redirect refused (to ${response.headers.get("location") ?? "nowhere"})`
          : `HTTP ${statusCode}`;
      return { statusCode, error, retryAfterMs: retryAfterMs(response.headers.get("retry-after"), Date.now()), durationMs: elapsed() };
    } catch (error) {
      if (this.#shutdown.signal.aborted) return "shutdown";
      const timedOut = signal.aborted || /no answer within/.test(errorText(error));
      return {
        statusCode: null,
        error: timedOut ? `no answer within ${config.webhookTimeoutMs} ms` : errorText(error),
        retryAfterMs: null,
        durationMs: elapsed(),
      };
    }
  }

  /** Records each attempt and what follows from it, in one transaction, where the lease is still ours. */
  async #record(results: readonly Outcome[]): Promise<void> {
    const { db, clock, config, realtime } = this.#app;
    const now = clock.now();
    const nowIso = now.toISOString();
    const events = realtime.batch();
    await db.transaction().execute(async (tx) => {
      for (const { delivery, endpoint, outcome } of results) {
        const ours = (qb: ReturnType<typeof tx.updateTable<"webhook_deliveries">>) =>
          qb.where("id", "=", delivery.id).where("lease_token", "=", delivery.lease_token);
        if (outcome === "shutdown") {
          // Handed back untried: the next instance (or this one, restarted) sends it at once.
          await ours(tx.updateTable("webhook_deliveries").set({ lease_token: null, lease_expires_at: null })).execute();
          continue;
        }
        if (outcome === "disabled" || !endpoint) {
          await ours(
            tx.updateTable("webhook_deliveries").set({
              status: "failed",
              next_attempt_at: null,
              last_error: "the endpoint is disabled",
              lease_token: null,
              lease_expires_at: null,
              updated_at: nowIso,
            }),
          ).execute();
          continue;
        }
        const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
        const gone = outcome.statusCode === 410;
        const attempts = delivery.attempt_count + 1;
        const retryIn = outcome.retryAfterMs ?? config.webhookRetryDelaysMs[attempts - 1];
        const failingSince = endpoint.failing_since ?? nowIso;
        const failedTooLong = !ok && now.getTime() - Date.parse(failingSince) >= DISABLE_AFTER_FAILING_MS;
        const next =
          ok || gone || failedTooLong || retryIn === undefined ? null : new Date(now.getTime() + withJitter(retryIn)).toISOString();
        const settled = await ours(
          tx.updateTable("webhook_deliveries").set({
            status: ok ? "succeeded" : next ? "pending" : "failed",
            attempt_count: attempts,
            next_attempt_at: next,
            lease_token: null,
            lease_expires_at: null,
            last_status_code: outcome.statusCode,
            last_error: outcome.error,
            updated_at: nowIso,
          }),
        ).executeTakeFirst();
        // Lost the lease (the endpoint was deleted, or the attempt outlived it): another holder records.
        if (Number(settled.numUpdatedRows) === 0) continue;
        await tx
          .insertInto("webhook_attempts")
          .values({
            delivery_id: delivery.id,
            attempted_at: nowIso,
            status_code: outcome.statusCode,
            duration_ms: outcome.durationMs,
            error: outcome.error,
            next_attempt_at: next,
          })
          .execute();
        if (ok) {
          if (endpoint.failing_since !== null) {
            await tx.updateTable("webhook_endpoints").set({ failing_since: null }).where("id", "=", endpoint.id).execute();
            endpoint.failing_since = null;
          }
          continue;
        }
        if (endpoint.failing_since === null) {
          await tx.updateTable("webhook_endpoints").set({ failing_since: nowIso }).where("id", "=", endpoint.id).execute();
          endpoint.failing_since = nowIso;
        }
        const reason = gone ? "gone" : failedTooLong ? "failing" : null;
        if (!reason) continue;
        // Only the first to disable it tells the owner (several deliveries, or instances, may see it fail at once).
        const disabled = await tx
          .updateTable("webhook_endpoints")
          .set({ status: "disabled", disabled_reason: reason, updated_at: nowIso })
          .where("id", "=", endpoint.id)
          .where("status", "=", "enabled")
          .executeTakeFirst();
        endpoint.status = "disabled";
        if (Number(disabled.numUpdatedRows) === 0) continue;
        await events.appendToUserStream(tx, endpoint.owner_id, WEBHOOK_DISABLED_EVENT, {
          webhookId: endpoint.id,
          url: endpoint.url,
          reason,
          message: gone ? "The receiver answered 410 Gone." : "The receiver failed every delivery for 5 days.",
        });
      }
    });
    events.publish();
  }
}
