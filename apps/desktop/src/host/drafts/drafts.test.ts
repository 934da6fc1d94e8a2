import { EventEmitter } from "node:events";
import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/host-harness";
import type { HostConfig, HostContext, SessionService } from "../host-context";
import { openLocalStore } from "../store/local-store";
import { createDraftsFacet } from "./drafts";

/** The drafts facet on a real local database, as whoever `signedIn` says (null: signed out). */
async function draftsOn(dir: string) {
  const store = await openLocalStore(dir);
  const who: { current: { serverUrl: string; userId: number } | null } = { current: null };
  const session = { credentials: () => (who.current ? { ...who.current, apiKey: "key" } : null) } as unknown as SessionService;
  const context: HostContext = { config: {} as HostConfig, store, session, events: new EventEmitter() };
  return {
    drafts: createDraftsFacet(context),
    store,
    signIn: (serverUrl: string, userId: number) => (who.current = { serverUrl, userId }),
  };
}

describe("drafts kept by the host", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it("keeps each account's drafts per section and conversation across reopening, newest write winning, until emptied", async () => {
    const dir = await tempDir("tandem-desktop-drafts-");
    dirs.push(dir);
    let { drafts, store, signIn } = await draftsOn(dir);
    await expect(drafts.listDrafts({ scope: "inbox" })).rejects.toThrow("Sign in first");

    signIn("http://a.example", 1);
    await drafts.saveDraft({ scope: "inbox", conversation: 7, text: "Half a thought", revision: 10 });
    await drafts.saveDraft({ scope: "inbox", conversation: "new", text: "To someone new", revision: 11 });
    await drafts.saveDraft({ scope: "agent", conversation: 7, text: "For the agent", revision: 12 });
    // A write that arrives after a newer one (they crossed on the way) changes nothing.
    await drafts.saveDraft({ scope: "inbox", conversation: 7, text: "Half a", revision: 9 });
    await store.close();

    ({ drafts, store, signIn } = await draftsOn(dir));
    signIn("http://a.example", 1);
    expect(await drafts.listDrafts({ scope: "inbox" })).toEqual(
      expect.arrayContaining([
        { conversation: 7, text: "Half a thought", revision: 10 },
        { conversation: "new", text: "To someone new", revision: 11 },
      ]),
    );
    expect(await drafts.listDrafts({ scope: "agent" })).toEqual([{ conversation: 7, text: "For the agent", revision: 12 }]);

    // Another account (the same user id on another server) sees none of them.
    signIn("http://b.example", 1);
    expect(await drafts.listDrafts({ scope: "inbox" })).toEqual([]);

    // Sent: the empty text forgets it, unless a newer text came meanwhile.
    signIn("http://a.example", 1);
    await drafts.saveDraft({ scope: "inbox", conversation: "new", text: "", revision: 5 });
    await drafts.saveDraft({ scope: "inbox", conversation: 7, text: "", revision: 13 });
    expect(await drafts.listDrafts({ scope: "inbox" })).toEqual([{ conversation: "new", text: "To someone new", revision: 11 }]);

    // Bad input is refused by name.
    await expect(drafts.saveDraft({ scope: "mail" as "inbox", conversation: 1, text: "x", revision: 1 })).rejects.toThrow(
      /^saveDraft: invalid input: scope/,
    );
    await expect(drafts.saveDraft({ scope: "inbox", conversation: 0, text: "x", revision: 1 })).rejects.toThrow(/conversation/);
    await store.close();
  });
});
