import { MAX_GUEST_MESSAGE } from "@tandem/core";
import express, { type Request, type Response, Router } from "express";
import { z } from "zod";
import { ChatStream } from "../../agent/chat/chat-stream";
import { hashSecret } from "../../auth/secret-token";
import type { AppContext } from "../../context";
import { bodyError } from "../../http/error-handler";
import { ApiError } from "../../http/errors";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../../http/json-depth";
import { describeIssues } from "../../http/validate";
import { fingerprintOf, GuestChat, guestMeta, sessionNotFound, type Visitor } from "./guest-chat";
import { guestPageHeaders, newPageNonce, renderGuestPage, renderGuestPageGone } from "./guest-page";
import { guestRichTextScript } from "./guest-rich-text";
import type { ShareGuard, VisitorAccount } from "./share-guard";
import type { ShareLinkRow } from "./share-links";

/** The JSON guest chat route, outside `/api/v1` as existing clients call it. */
export const GUEST_CHAT_PATH = "/api/chat/guest-v04";

const GuestMessageBody = z.object({
  token: z.string({ error: "is required: the share link's token" }).min(1).max(64),
  message: z
    .string({ error: "is required" })
    .trim()
    .min(1, { error: "must not be empty" })
    .max(MAX_GUEST_MESSAGE, { error: `is at most ${MAX_GUEST_MESSAGE} characters` }),
  stream: z.boolean().default(false),
  sessionKey: z.string().max(64).optional(),
  visitorName: z.string().trim().max(80).optional(),
});

const GuestMetaQuery = z.object({
  token: z.string({ error: "is required: the share link's token" }).min(1).max(64),
  meta: z.string().max(10).optional(),
  sessionKey: z.string().max(64).optional(),
});

function parse<S extends z.ZodType>(schema: S, where: string, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new ApiError(400, "invalid_request", describeIssues(where, result.error));
  return result.data;
}

function addressOf(req: Request): string {
  return req.socket.remoteAddress ?? "unknown";
}

function visitorOf(req: Request, account: VisitorAccount | null, name?: string): Visitor {
  return {
    userId: account?.userId ?? null,
    username: account?.username ?? null,
    name: name || account?.username || null,
    fingerprint: fingerprintOf(addressOf(req), req.get("user-agent") ?? ""),
  };
}

/** Stops a run when the guest goes away before the answer is complete. */
function goneSignal(req: Request, res: Response): AbortSignal {
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  req.on("aborted", () => controller.abort());
  return controller.signal;
}

/** Earlier messages of a session, for a page that reloads; only with the session's own key. */
async function transcript(app: AppContext, link: ShareLinkRow, sessionKey: string, visitorUserId: number | null) {
  const session = await app.db
    .selectFrom("guest_sessions")
    .select(["id", "link_id", "visitor_user_id"])
    .where("session_key_hash", "=", hashSecret(sessionKey))
    .executeTakeFirst();
  if (!session || Number(session.link_id) !== Number(link.id)) throw sessionNotFound();
  // A session opened signed in is that account's, as it is for continuing it.
  if (session.visitor_user_id !== null && Number(session.visitor_user_id) !== visitorUserId) throw sessionNotFound();
  return app.db
    .selectFrom("guest_messages")
    .select(["role", "content", "created_at as createdAt"])
    .where("session_id", "=", session.id)
    .orderBy("id")
    .execute();
}

/**
 * The public face of share links: the page `/a/<token>` and the JSON route. Both redeem the token
 * through the guard on every request, so an expired or revoked link stops at once.
 */
export function guestRouter(app: AppContext, guard: ShareGuard): Router {
  const chat = new GuestChat(app);
  const router = Router();
  // As the v1 routes read JSON: any content type, UTF-8 only, no absurd nesting.
  const json = express.json({
    limit: 64 * 1024,
    type: () => true,
    strict: true,
    verify: (_req, _res, body, encoding) => {
      if (encoding !== "utf-8") throw new ApiError(415, "unsupported_encoding", `JSON bodies must be UTF-8, not ${encoding}`);
      if (jsonNestsDeeperThan(body, MAX_JSON_DEPTH)) {
        throw new ApiError(400, "json_too_deep", `The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
      }
    },
  });

  router.get("/a/:token", async (req, res, next) => {
    try {
      const nonce = newPageNonce();
      let link: ShareLinkRow;
      try {
        link = await guard.redeem(String(req.params.token), addressOf(req));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        res
          .status(error.status)
          .set({ ...guestPageHeaders(nonce), ...error.headers })
          .send(renderGuestPageGone(nonce, error.status));
        return;
      }
      const meta = await guestMeta(app, link);
      // A link that needs sign-in: the visitor signs in with their account on the server's sign-in
      // page, which brings them back here; the page then speaks with that browser session.
      const session = meta.requireSignIn ? await guard.signedInBrowser(req) : null;
      res
        .status(200)
        .set(guestPageHeaders(nonce))
        .send(renderGuestPage(nonce, String(req.params.token), meta, await guestRichTextScript(), session));
    } catch (error) {
      next(error);
    }
  });

  router.get(GUEST_CHAT_PATH, async (req, res, next) => {
    try {
      const query = parse(GuestMetaQuery, "query", req.query);
      const link = await guard.redeem(query.token, addressOf(req));
      const account = await guard.visitorAccount(link, req);
      const meta = await guestMeta(app, link);
      res.set("cache-control", "no-store");
      if (query.sessionKey === undefined) res.json(meta);
      else res.json({ ...meta, messages: await transcript(app, link, query.sessionKey, account?.userId ?? null) });
    } catch (error) {
      next(error);
    }
  });

  router.post(GUEST_CHAT_PATH, async (req, res, next) => {
    try {
      await new Promise<void>((resolve, reject) => json(req, res, (error?: unknown) => (error ? reject(bodyError(error)) : resolve())));
      const body = parse(GuestMessageBody, "body", req.body);
      const link = await guard.redeem(body.token, addressOf(req));
      const account = await guard.visitorAccount(link, req);
      const started = Date.now();
      const { agentName, ownerName } = await guestMeta(app, link);
      const request = {
        link,
        visitor: visitorOf(req, account, body.visitorName),
        message: body.message,
        sessionKey: body.sessionKey,
        signal: goneSignal(req, res),
      };
      if (!body.stream) {
        const turn = await chat.send(request);
        res.set("cache-control", "no-store").json({
          success: true,
          sessionKey: turn.sessionKey,
          sessionId: turn.sessionId,
          agentName,
          ownerName,
          response: turn.response,
          mode: "agent",
          answeredBy: turn.answeredBy,
          toolsUsed: turn.toolsUsed,
          messagesLeft: turn.messagesLeft,
          elapsedMs: Date.now() - started,
        });
        return;
      }
      // Set by a callback, so the compiler cannot follow it: kept in an object.
      const live: { stream?: ChatStream } = {};
      try {
        const turn = await chat.send({
          ...request,
          onAccepted: (session) => {
            live.stream = new ChatStream(res, app.config.agentProgressMs);
            live.stream.write({ type: "session-start", ...session });
          },
          onEvent: (event) => live.stream?.write(event),
        });
        live.stream?.write({
          type: "completion",
          sessionKey: turn.sessionKey,
          sessionId: turn.sessionId,
          agentName,
          ownerName,
          response: turn.response,
          mode: "agent",
          answeredBy: turn.answeredBy,
          messagesLeft: turn.messagesLeft,
          elapsedMs: Date.now() - started,
        });
      } catch (error) {
        // Before the stream started, the failure is an ordinary JSON error.
        const { stream } = live;
        if (!stream) throw error;
        stream.write({
          type: "error",
          error: error instanceof ApiError ? error.message : "The server failed while answering.",
          ...(error instanceof ApiError ? { code: error.code, status: error.status } : {}),
        });
        if (!(error instanceof ApiError)) app.logger.error({ err: error }, "guest chat stream failed");
      } finally {
        live.stream?.end();
      }
    } catch (error) {
      next(error);
    }
  });
  return router;
}
