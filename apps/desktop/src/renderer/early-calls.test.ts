import { describe, expect, it } from "vitest";
import type { DesktopApi, LocalSyncInfo, SessionInfo } from "../shared/desktop-api";
import { earlyCallsAnswered, makeEarlyCalls, peekEarly, takeEarly } from "./early-calls";

const LOCAL_SYNC: LocalSyncInfo = { url: "ws://127.0.0.1:1", token: "t", userId: 1, workspaceDoc: "workspace:1", todosDoc: "todos:1" };

/** A host answering the four early calls, counting them. */
function fakeApi(session: SessionInfo) {
  const calls: string[] = [];
  const api = {
    getSession: async () => {
      calls.push("getSession");
      return session;
    },
    getLocalSync: async () => {
      calls.push("getLocalSync");
      if (session.state !== "signed_in") throw new Error("Sign in first");
      return LOCAL_SYNC;
    },
    getWorkspaceOutline: async (input?: { firstScreen?: boolean }) => {
      calls.push(`outline:${input?.firstScreen === true}`);
      return "text";
    },
    getStatus: async (input?: { fresh?: boolean }) => {
      calls.push(`status:${input?.fresh === true}`);
      return { approvalsPending: 1 };
    },
  } as unknown as DesktopApi;
  return { api, calls };
}

const SIGNED_IN: SessionInfo = { state: "signed_in", serverUrl: "http://s", userId: 1, username: "ada", name: null } as SessionInfo;

describe("the page's early calls", () => {
  it("hands each answer to the first who asks, and calls anew for later askers", async () => {
    const { api, calls } = fakeApi(SIGNED_IN);
    makeEarlyCalls(api);
    await earlyCallsAnswered(1_000);
    expect(calls.sort()).toEqual(["getLocalSync", "getSession", "outline:true", "status:true"]);
    expect(peekEarly(api, "getSession")).toBe(SIGNED_IN);
    expect(peekEarly(api, "getStatus")).toEqual({ approvalsPending: 1 });
    expect(await takeEarly(api, "getLocalSync")).toEqual(LOCAL_SYNC);
    expect(await takeEarly(api, "getOutlineFirstScreen")).toBe("text");
    expect(await takeEarly(api, "getStatus")).toEqual({ approvalsPending: 1 });
    expect(calls).toHaveLength(4);
    // Taken: peeking finds nothing, and asking again is a new call.
    expect(peekEarly(api, "getLocalSync")).toBeUndefined();
    await takeEarly(api, "getLocalSync");
    expect(calls).toHaveLength(5);
  });

  it("does not ask where the documents are while signed out, and asks once taken", async () => {
    const { api, calls } = fakeApi({ state: "signed_out", serverUrl: null });
    makeEarlyCalls(api);
    await earlyCallsAnswered(1_000);
    expect(calls).not.toContain("getLocalSync");
    expect(calls).not.toContain("status:true");
    // Taken after a sign-in (here the fake still says signed out): the call is made then, and its failure is the caller's.
    await expect(takeEarly(api, "getLocalSync")).rejects.toThrow("Sign in first");
    expect(calls).toContain("getLocalSync");
  });

  it("answers for the API it was made with only", async () => {
    const first = fakeApi(SIGNED_IN);
    const other = fakeApi(SIGNED_IN);
    makeEarlyCalls(first.api);
    await earlyCallsAnswered(1_000);
    expect(peekEarly(other.api, "getSession")).toBeUndefined();
    await takeEarly(other.api, "getSession");
    expect(other.calls).toEqual(["getSession"]);
  });
});
