import { createHash, randomBytes } from "node:crypto";
import type { ModelMessage } from "ai";
import { agentInstructions } from "../../agent/prompt/instructions";
import { newBlockNonce, renderBlock } from "../../agent/prompt/untrusted-blocks";
import { type AgentEvent, runAgent } from "../../agent/runner/agent-runner";
import { startRun } from "../../agent/usage/meters";
import { hashSecret, randomBase62 } from "../../auth/secret-token";
import type { AppContext } from "../../context";
import { ApiError, notFound, tooManyRequests } from "../../http/errors";
import { whileLinkLive } from "./link-bound";
import { guestAccess } from "./share-grant";
import { capabilitiesOf, liveLinkById, type ShareLinkRow } from "./share-links";

/** Earlier messages of the session a guest turn sends to the model. */
const HISTORY_MESSAGES = 20;
const HISTORY_CHARS = 30_000;
/** Guest runs going at once on one link; more get a 429 (a link is public, the model is the owner's). */
const MAX_RUNS_PER_LINK = 4;
const LOCAL_POLL_MS = 200;

/** Who is visiting: a signed-in account (an API key as Bearer), or nobody in particular. */
export interface Visitor {
  readonly userId: number | null;
  readonly username: string | null;
  /** Shown to the owner; chosen by the guest, so only a label. */
  readonly name: string | null;
  /** A short hash of the client address and user agent: tells visitors apart, identifies no one. */
  readonly fingerprint: string;
}

export function fingerprintOf(address: string, userAgent: string): string {
  return createHash("sha256").update(`${address}\n${userAgent}`).digest("hex").slice(0, 16);
}

export const sessionNotFound = () => new ApiError(404, "session_not_found", "This conversation is unknown or has ended");

export async function ownerNames(app: AppContext, link: ShareLinkRow): Promise<{ agentName: string; ownerName: string }> {
  const owner = await app.db.selectFrom("users").select(["name", "username"]).where("id", "=", Number(link.owner_id)).executeTakeFirst();
  const ownerName = link.identity === 1 ? owner?.name || owner?.username || "the owner" : "the owner";
  return { agentName: link.identity === 1 ? `${ownerName}'s agent` : "Tandem agent", ownerName };
}

/** What `meta=true` answers: who the guest will talk to and what the link allows. Creates nothing. */
export async function guestMeta(app: AppContext, link: ShareLinkRow) {
  return {
    success: true as const,
    ...(await ownerNames(app, link)),
    label: link.label,
    target: link.target,
    capabilities: capabilitiesOf(link),
    requireSignIn: link.require_sign_in === 1,
    messageLimit: app.config.guestMessageLimit,
    expiresAt: link.expires_at,
  };
}

export interface GuestTurnRequest {
  readonly link: ShareLinkRow;
  readonly visitor: Visitor;
  readonly message: string;
  readonly sessionKey?: string;
  readonly signal: AbortSignal;
  readonly onEvent?: (event: AgentEvent) => void;
  /** Called once the message is accepted (session found, limit not reached): a stream may start. */
  readonly onAccepted?: (session: { sessionKey: string; sessionId: string }) => void;
}

export interface GuestTurnResult {
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly response: string;
  readonly answeredBy: "server" | "local";
  readonly toolsUsed: string[];
  readonly messagesLeft: number;
}

interface SessionRow {
  id: number;
  session_id: string;
  visitor_user_id: number | null;
  visitor_name: string | null;
}

/**
 * The session a `sessionKey` continues, which must be on this very link and, when it was opened
 * by a signed-in visitor, by the same account; or a new one. Anything else is the same 404.
 */
async function openSession(app: AppContext, request: GuestTurnRequest): Promise<{ session: SessionRow; sessionKey: string }> {
  const { link, visitor } = request;
  if (request.sessionKey !== undefined) {
    const key = request.sessionKey;
    if (!/^gsk_[A-Za-z0-9]{32}$/.test(key)) throw sessionNotFound();
    const row = await app.db
      .selectFrom("guest_sessions")
      .select(["id", "session_id", "visitor_user_id", "visitor_name", "link_id"])
      .where("session_key_hash", "=", hashSecret(key))
      .executeTakeFirst();
    if (!row || Number(row.link_id) !== Number(link.id)) throw sessionNotFound();
    if (row.visitor_user_id !== null && Number(row.visitor_user_id) !== visitor.userId) throw sessionNotFound();
    return {
      session: { ...row, id: Number(row.id), visitor_user_id: row.visitor_user_id === null ? null : Number(row.visitor_user_id) },
      sessionKey: key,
    };
  }
  const sessionKey = `gsk_${randomBase62(32)}`;
  const now = app.clock.iso();
  const row = await app.db
    .insertInto("guest_sessions")
    .values({
      session_id: `gs_${randomBytes(12).toString("hex")}`,
      session_key_hash: hashSecret(sessionKey),
      link_id: Number(link.id),
      owner_id: Number(link.owner_id),
      visitor_user_id: visitor.userId,
      visitor_name: visitor.name,
      fingerprint: visitor.fingerprint,
      created_at: now,
      last_active_at: now,
    })
    .returning(["id", "session_id", "visitor_user_id", "visitor_name"])
    .executeTakeFirstOrThrow();
  return {
    session: { ...row, id: Number(row.id), visitor_user_id: row.visitor_user_id === null ? null : Number(row.visitor_user_id) },
    sessionKey,
  };
}

/** Counts the message against the session's limit in one statement, so parallel sends cannot pass it. */
async function takeMessage(app: AppContext, sessionId: number): Promise<number> {
  const limit = app.config.guestMessageLimit;
  const row = await app.db
    .updateTable("guest_sessions")
    .set((eb) => ({ message_count: eb("message_count", "+", 1), last_active_at: app.clock.iso() }))
    .where("id", "=", sessionId)
    .where("message_count", "<", limit)
    .returning("message_count")
    .executeTakeFirst();
  if (!row) {
    throw new ApiError(429, "message_limit", `This conversation has reached its limit of ${limit} messages; start a new one`);
  }
  return limit - Number(row.message_count);
}

export class GuestChat {
  constructor(private readonly app: AppContext) {}

  /** One guest turn; a link's turns running at once are counted over every instance (`app.shared`). */
  async send(request: GuestTurnRequest): Promise<GuestTurnResult> {
    const release = await this.app.shared.acquireSlot("guest-runs", String(request.link.id), MAX_RUNS_PER_LINK);
    if (!release) throw tooManyRequests(5);
    try {
      return await this.#turn(request);
    } finally {
      release();
    }
  }

  async #turn(request: GuestTurnRequest): Promise<GuestTurnResult> {
    const { app } = this;
    const { link } = request;
    const { session, sessionKey } = await openSession(app, request);
    const messagesLeft = await takeMessage(app, session.id);
    const local = link.local_agent === 1 && app.config.guestLocalWaitMs > 0;
    const history = await this.#history(session.id);
    const inserted = await app.db
      .insertInto("guest_messages")
      .values({
        session_id: session.id,
        owner_id: Number(link.owner_id),
        role: "user",
        content: request.message,
        answered_by: null,
        local_state: local ? "pending" : null,
        created_at: app.clock.iso(),
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    const base = { sessionKey, sessionId: session.session_id, messagesLeft };
    request.onAccepted?.(base);
    if (local) {
      const reply = await this.#waitForLocal(Number(inserted.id), request.signal);
      if (reply !== null) {
        request.onEvent?.({ type: "text-delta", textDelta: reply });
        return { ...base, response: reply, answeredBy: "local", toolsUsed: [] };
      }
    }
    // The guest left while waiting: nobody is there to read an answer.
    if (request.signal.aborted) return { ...base, response: "", answeredBy: "server", toolsUsed: [] };
    // Read again: a link revoked or expired while the guest waited answers nothing more.
    const live = await liveLinkById(app, Number(link.id));
    if (!live) throw notFound("share link");
    const result = await this.#run(live, session, history, request);
    // Revoked or expired during the run: its tools stopped at once; nor is its answer given or kept.
    if (!(await liveLinkById(app, Number(link.id)))) throw notFound("share link");
    // A run cut off before it said anything (the guest left) leaves no empty answer behind.
    if (result.text) {
      await app.db
        .insertInto("guest_messages")
        .values({
          session_id: session.id,
          owner_id: Number(link.owner_id),
          role: "assistant",
          content: result.text,
          answered_by: "server",
          local_state: null,
          created_at: app.clock.iso(),
        })
        .execute();
    }
    return { ...base, response: result.text, answeredBy: "server", toolsUsed: result.toolsUsed };
  }

  async #history(sessionId: number): Promise<{ role: "user" | "assistant"; content: string }[]> {
    const rows = await this.app.db
      .selectFrom("guest_messages")
      .select(["role", "content"])
      .where("session_id", "=", sessionId)
      .orderBy("id", "desc")
      .limit(HISTORY_MESSAGES)
      .execute();
    const kept: { role: "user" | "assistant"; content: string }[] = [];
    let budget = HISTORY_CHARS;
    for (const row of rows) {
      budget -= row.content.length;
      if (budget < 0) break;
      kept.unshift(row);
    }
    return kept;
  }

  /**
   * Waits for the owner's machine to answer; null when it did not in time (the message is then
   * marked expired in the same statement that checks it, so a late reply is refused, not lost
   * silently: the bridge hears 409).
   */
  async #waitForLocal(messageId: number, signal: AbortSignal): Promise<string | null> {
    const { app } = this;
    const deadline = Date.now() + app.config.guestLocalWaitMs;
    while (Date.now() < deadline && !signal.aborted) {
      const reply = await this.#localReply(messageId);
      if (reply !== null) return reply;
      await new Promise((resolve) => setTimeout(resolve, LOCAL_POLL_MS));
    }
    const expired = await app.db
      .updateTable("guest_messages")
      .set({ local_state: "expired" })
      .where("id", "=", messageId)
      .where("local_state", "=", "pending")
      .executeTakeFirst();
    if (expired.numUpdatedRows > 0n) return null;
    return this.#localReply(messageId);
  }

  async #localReply(messageId: number): Promise<string | null> {
    const row = await this.app.db
      .selectFrom("guest_messages")
      .select(["local_state", "session_id"])
      .where("id", "=", messageId)
      .executeTakeFirst();
    if (row?.local_state !== "answered") return null;
    const reply = await this.app.db
      .selectFrom("guest_messages")
      .select("content")
      .where("session_id", "=", row.session_id)
      .where("id", ">", messageId)
      .where("answered_by", "=", "local")
      .orderBy("id")
      .executeTakeFirst();
    return reply?.content ?? null;
  }

  /** One run under the link's grant; the guest's words enter only as untrusted blocks. */
  async #run(
    link: ShareLinkRow,
    session: SessionRow,
    history: { role: "user" | "assistant"; content: string }[],
    request: GuestTurnRequest,
  ) {
    const { app } = this;
    // The name is the guest's own text: it goes only into the blocks' attributes (which cannot
    // hold markup), never into the instructions.
    const label = "a guest";
    const access = await guestAccess(app, link, session.session_id, label);
    const { ownerName } = await ownerNames(app, link);
    const nonce = newBlockNonce();
    const from = { from: session.visitor_name ?? "guest" };
    const messages: ModelMessage[] = history.map((row) =>
      row.role === "user"
        ? { role: "user", content: renderBlock(nonce, { source: "guest-message", attributes: from, text: row.content }) }
        : { role: "assistant", content: row.content },
    );
    const noteBlock = access.note
      ? renderBlock(nonce, { source: "note", attributes: { id: access.note.id, title: access.note.title }, text: access.note.markdown })
      : null;
    messages.push({
      role: "user",
      content: [renderBlock(nonce, { source: "guest-message", attributes: from, text: request.message }), noteBlock]
        .filter(Boolean)
        .join("\n\n"),
    });
    const model = app.models.resolve();
    // The owner's budgets are checked before the model is called (402 budget_exceeded).
    const meter = await startRun(app, { userId: Number(link.owner_id) }, { source: "guest", model });
    const result = await runAgent({
      app,
      model,
      grant: access.grant,
      timezone: "UTC",
      instructions: agentInstructions({
        ownerName,
        askedBy: `${label} who opened ${ownerName}'s share link${link.label ? ` "${link.label}"` : ""}`,
        timezone: "UTC",
        now: app.clock.now(),
        blockNonce: nonce,
      }),
      blockNonce: nonce,
      messages,
      signal: request.signal,
      onEvent: request.onEvent ?? (() => {}),
      wrapTool: whileLinkLive(app, Number(link.id)),
      onStep: meter.onStep,
    });
    if (result.status === "failed") throw new ApiError(502, "model_failed", result.error ?? "The agent could not answer just now.");
    return result;
  }
}
