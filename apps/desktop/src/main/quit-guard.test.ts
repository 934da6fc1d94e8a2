import { describe, expect, it } from "vitest";
import { createQuitGuard, type QuitGuardDeps, quitWarning } from "./quit-guard";

/** Stands in for Electron's app and dialog, and the host; records what the guard did. */
function harness(unsynced: number, answer: boolean, unsaved: string | null = null) {
  const log: string[] = [];
  let finishClose: () => void = () => {};
  const deps: QuitGuardDeps = {
    unsyncedDocuments: () => unsynced,
    unsavedWork: () => unsaved,
    confirmQuit: (message) => {
      log.push(`ask: ${message}`);
      return answer;
    },
    closeHost: () => {
      log.push("close host");
      return new Promise<void>((resolve) => {
        finishClose = resolve;
      });
    },
    quit: () => log.push("quit"),
    onCloseError: (error) => log.push(`error: ${String(error)}`),
  };
  const guard = createQuitGuard(deps);
  const beforeQuit = () => {
    let prevented = false;
    guard.onBeforeQuit({ preventDefault: () => (prevented = true) });
    return prevented;
  };
  return { guard, log, beforeQuit, finishClose: () => finishClose() };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the quit guard", () => {
  it("closes the host before letting the app quit, without asking when everything is synced", async () => {
    const { guard, log, beforeQuit, finishClose } = harness(0, false);
    expect(beforeQuit()).toBe(true);
    expect(guard.quitting).toBe(true);
    // A second quit request while closing is held too, and closes nothing twice.
    expect(beforeQuit()).toBe(true);
    expect(log).toEqual(["close host"]);
    finishClose();
    await flush();
    expect(log).toEqual(["close host", "quit"]);
    // The quit main then requests goes through.
    expect(beforeQuit()).toBe(false);
  });

  it("asks when documents are not on the server yet, and stays when the owner cancels", () => {
    const { guard, log, beforeQuit } = harness(3, false);
    expect(beforeQuit()).toBe(true);
    expect(log).toEqual(["ask: 3 documents have changes not yet on the server. Quit anyway?"]);
    expect(guard.quitting).toBe(false);
  });

  it("asks when the page holds unsaved edits, saying which", () => {
    const { guard, log, beforeQuit } = harness(0, false, "Your heartbeat checklist is not saved.");
    expect(beforeQuit()).toBe(true);
    expect(log).toEqual(["ask: Your heartbeat checklist is not saved. Quit anyway?"]);
    expect(guard.quitting).toBe(false);
  });

  it("quits anyway when the owner says so", async () => {
    const { log, beforeQuit, finishClose } = harness(1, true);
    expect(beforeQuit()).toBe(true);
    finishClose();
    await flush();
    expect(log).toEqual(["ask: 1 document has changes not yet on the server. Quit anyway?", "close host", "quit"]);
  });

  it("quits even if closing the host fails, and reports it", async () => {
    const log: string[] = [];
    const guard = createQuitGuard({
      unsyncedDocuments: () => 0,
      unsavedWork: () => null,
      confirmQuit: () => true,
      closeHost: () => Promise.reject(new Error("disk gone")),
      quit: () => log.push("quit"),
      onCloseError: (error) => log.push(`error: ${(error as Error).message}`),
    });
    guard.onBeforeQuit({ preventDefault: () => {} });
    await flush();
    expect(log).toEqual(["error: disk gone", "quit"]);
  });

  it("words the warning for one and for many", () => {
    expect(quitWarning(1)).toBe("1 document has changes not yet on the server. Quit anyway?");
    expect(quitWarning(12)).toBe("12 documents have changes not yet on the server. Quit anyway?");
    expect(quitWarning(2, "Edits are not saved.")).toBe(
      "Edits are not saved. 2 documents have changes not yet on the server. Quit anyway?",
    );
  });
});
