import type { ChatRequest } from "@tandem/core";
import type { ModelMessage } from "ai";
import type { z } from "zod";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { forbidden } from "../../http/errors";
import { createConversation, getOwnConversation, type MessageRow, recentMessages, titleFrom } from "../conversations/conversation-store";
import type { ResolvedModel } from "../models/model-catalog";
import { agentInstructions } from "../prompt/instructions";
import { newBlockNonce, renderBlock } from "../prompt/untrusted-blocks";
import { findTool, toolsetFor } from "../tools/registry";
import { ownerGrant, type RunGrant } from "../tools/run-grant";

/** Earlier messages a turn sends to the model: the newest ones, within a character budget. */
const HISTORY_MESSAGES = 40;
const HISTORY_CHARS = 60_000;
/** How much of one attached note joins the prompt. */
const ATTACHMENT_CHARS = 40_000;

export type ChatBody = z.output<typeof ChatRequest>;

/** Everything a chat turn needs, checked before the first byte is sent (so bad input is a 4xx). */
export interface PreparedTurn {
  readonly conversationId: number;
  /** True when this turn created the conversation: a failed first turn removes it again. */
  readonly isNewConversation: boolean;
  readonly model: ResolvedModel;
  readonly grant: RunGrant;
  readonly instructions: string;
  /** The nonce of the turn's untrusted blocks, which `instructions` names. */
  readonly blockNonce: string;
  readonly messages: ModelMessage[];
  readonly ownerName: string;
}

export async function prepareTurn(app: AppContext, principal: UserPrincipal, body: ChatBody): Promise<PreparedTurn> {
  const model = app.models.resolve(body.model);
  const grant = ownerGrant(principal.userId, principal.credential.scopes, principal.credential.id);
  const nonce = newBlockNonce();
  const attachments = await attachmentBlocks(app, grant, body, nonce);
  const existing =
    body.conversationId === undefined ? undefined : await getOwnConversation(app.db, principal.userId, "agent", body.conversationId);
  const history = existing ? await recentMessages(app.db, existing.id, HISTORY_MESSAGES) : [];
  const user = await app.db.selectFrom("users").select(["name", "username"]).where("id", "=", principal.userId).executeTakeFirst();
  const ownerName = user?.name || user?.username || principal.username;
  const now = app.clock.now();
  const conversationId =
    existing?.id ?? (await createConversation(app.db, principal.userId, "agent", titleFrom(body.message), now.toISOString()));
  return {
    conversationId,
    isNewConversation: existing === undefined,
    model,
    grant,
    instructions: agentInstructions({ ownerName, timezone: body.userTimezone, now, blockNonce: nonce }),
    blockNonce: nonce,
    messages: [...historyMessages(history), { role: "user", content: [body.message, ...attachments].join("\n\n") }],
    ownerName,
  };
}

/** Attached notes, read through the same tool (and so the same grant) a run would use. */
async function attachmentBlocks(app: AppContext, grant: RunGrant, body: ChatBody, nonce: string): Promise<string[]> {
  const ids = [...new Set(body.attachmentIds ?? [])];
  if (ids.length === 0) return [];
  const read = findTool("get_note_content");
  if (!read || !toolsetFor(grant).includes(read)) {
    throw forbidden("insufficient_scope", "Attaching notes needs a key with the os.notes:read scope");
  }
  const context = { app, grant, timezone: body.userTimezone, signal: new AbortController().signal };
  const blocks: string[] = [];
  for (const noteId of ids) {
    const note = (await read.execute({ noteId }, context)) as { id: number; title: string; markdown: string };
    const text = note.markdown.length > ATTACHMENT_CHARS ? `${note.markdown.slice(0, ATTACHMENT_CHARS)}\n[…cut]` : note.markdown;
    blocks.push(renderBlock(nonce, { source: "note", attributes: { id: note.id, title: note.title }, text }));
  }
  return blocks;
}

/** Earlier turns as plain text messages, newest kept first when the budget runs out. */
function historyMessages(rows: readonly MessageRow[]): ModelMessage[] {
  const kept: ModelMessage[] = [];
  let budget = HISTORY_CHARS;
  for (const row of [...rows].reverse()) {
    if (!row.content) continue;
    budget -= row.content.length;
    if (budget < 0) break;
    kept.push(row.role === "user" ? { role: "user", content: row.content } : { role: "assistant", content: row.content });
  }
  return kept.reverse();
}
