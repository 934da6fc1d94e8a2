import { z } from "zod";
import { DRAFT_TEXT_MAX, type DraftConversation, type DraftItem } from "../../shared/desktop-api";
import type { DraftsFacet } from "../facets";
import type { HostContext } from "../host-context";
import { parseInput } from "../parse-input";
import { accountKey } from "../replication/sync";

const Scope = z.enum(["inbox", "agent"]);
const Conversation = z.union([z.literal("new"), z.number().int().positive().max(Number.MAX_SAFE_INTEGER)]);
const ListInput = z.object({ scope: Scope });
const SaveInput = z.object({
  scope: Scope,
  conversation: Conversation,
  text: z.string().max(DRAFT_TEXT_MAX),
  revision: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
});

const conversationOf = (stored: string): DraftConversation => (stored === "new" ? "new" : Number(stored));

/**
 * Unsent messages typed in the Inbox and to the Agent, in the local database like the documents, so
 * a reload, a closed window or a restart loses nothing typed. They belong to the account that typed
 * them (another account signed in here never sees them) and go when sent: the page then saves the
 * empty text. Writes carry the page's revision, so of two writes crossing on their way here
 * (the page sends its latest text as it goes away) the newer one stays.
 */
export function createDraftsFacet(context: HostContext): DraftsFacet {
  const { db } = context.store;
  const account = (): string => {
    const credentials = context.session.credentials();
    if (!credentials) throw new Error("Sign in first");
    return accountKey(credentials.serverUrl, credentials.userId);
  };

  return {
    async listDrafts(input) {
      const { scope } = parseInput("listDrafts", ListInput, input);
      const rows = await db
        .selectFrom("drafts")
        .select(["conversation", "text", "revision"])
        .where("account", "=", account())
        .where("scope", "=", scope)
        .execute();
      return rows.map((row): DraftItem => ({ conversation: conversationOf(row.conversation), text: row.text, revision: row.revision }));
    },

    async saveDraft(input) {
      const { scope, conversation, text, revision } = parseInput("saveDraft", SaveInput, input);
      const key = { account: account(), scope, conversation: String(conversation) };
      if (text === "") {
        await db
          .deleteFrom("drafts")
          .where("account", "=", key.account)
          .where("scope", "=", key.scope)
          .where("conversation", "=", key.conversation)
          .where("revision", "<=", revision)
          .execute();
        return;
      }
      await db
        .insertInto("drafts")
        .values({ ...key, text, revision, updated_at: new Date().toISOString() })
        .onConflict((oc) =>
          oc
            .columns(["account", "scope", "conversation"])
            .doUpdateSet((eb) => ({
              text: eb.ref("excluded.text"),
              revision: eb.ref("excluded.revision"),
              updated_at: eb.ref("excluded.updated_at"),
            }))
            .where("drafts.revision", "<=", (eb) => eb.ref("excluded.revision")),
        )
        .execute();
    },
  };
}
