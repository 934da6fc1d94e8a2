import { describe, expect, it } from "vitest";
import { syncStatusOf } from "./sync-status";

describe("the sync state shown", () => {
  const progress = { connected: true, error: null, documents: 12, behind: 0, unsynced: 0 };

  it("follows the session, the socket, refusals and what is behind", () => {
    expect(syncStatusOf(null)).toEqual({ state: "signed_out", pending: 0, documents: 0, message: null });
    expect(syncStatusOf(progress)).toEqual({ state: "synced", pending: 0, documents: 12, message: null });
    expect(syncStatusOf({ ...progress, behind: 3, unsynced: 1 })).toEqual({ state: "syncing", pending: 3, documents: 12, message: null });
    expect(syncStatusOf({ ...progress, connected: false, behind: 12, unsynced: 2 })).toMatchObject({ state: "offline", pending: 2 });
    expect(syncStatusOf({ ...progress, connected: false, error: "refused", unsynced: 1 })).toEqual({
      state: "error",
      pending: 1,
      documents: 12,
      message: "refused",
    });
  });
});
