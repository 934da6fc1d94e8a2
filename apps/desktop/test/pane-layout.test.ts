import { describe, expect, it } from "vitest";
import { DEFAULT_PREFERENCES, EDITOR_MIN, layoutPanes, PANE_LIMITS } from "../src/renderer/notes/pane-layout";

const editorWidth = (width: number, layout: { folders: number; list: number; snapshots: number }) =>
  width - layout.folders - layout.list - layout.snapshots;

describe("the notes view's panes around a readable editor", () => {
  it("shows every pane when there is room", () => {
    expect(layoutPanes(1110, DEFAULT_PREFERENCES, false)).toEqual({ folders: 200, list: 260, snapshots: 0 });
  });

  it("gives way folders first, then the list, never the editor's minimum", () => {
    for (const width of [670, 700, 800, 900, 1000, 1200, 1600]) {
      for (const snapshots of [false, true]) {
        const layout = layoutPanes(width, DEFAULT_PREFERENCES, snapshots);
        expect(editorWidth(width, layout)).toBeGreaterThanOrEqual(EDITOR_MIN);
        if (layout.folders > 0) expect(layout.list).toBeGreaterThan(0);
      }
    }
    // 800 px window: 670 for the notes view; the list stays, narrowed, the folders go.
    expect(layoutPanes(670, DEFAULT_PREFERENCES, false)).toEqual({ folders: 0, list: 250, snapshots: 0 });
    // With snapshots open there, the snapshots panel takes what is left at its minimum or more.
    expect(layoutPanes(670, DEFAULT_PREFERENCES, true)).toEqual({ folders: 0, list: 0, snapshots: 250 });
  });

  it("keeps what the owner hid hidden and never shows a pane below its minimum", () => {
    const hidden = { ...DEFAULT_PREFERENCES, foldersOpen: false };
    expect(layoutPanes(1600, hidden, false).folders).toBe(0);
    const tight = layoutPanes(EDITOR_MIN + PANE_LIMITS.list.min - 1, DEFAULT_PREFERENCES, false);
    expect(tight.list).toBe(0);
  });
});
