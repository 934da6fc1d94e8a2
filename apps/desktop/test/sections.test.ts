import { describe, expect, it } from "vitest";
import { SECTION_SHORTCUT, sectionForKey, sectionFromHash } from "../src/renderer/layout/sections";

describe("sections named by the URL hash", () => {
  it("opens the section the hash names, and ignores anything else", () => {
    expect(sectionFromHash("#approvals")).toBe("approvals");
    expect(sectionFromHash("bridge")).toBe("bridge");
    expect(sectionFromHash("#agent")).toBe("agent");
    expect(sectionFromHash("#heartbeat")).toBe("heartbeat");
    expect(sectionFromHash("#connections")).toBe("connections");
    expect(sectionFromHash("#inbox")).toBe("inbox");
    expect(sectionFromHash("#share")).toBe("share");
    expect(sectionFromHash("#usage")).toBe("usage");
    expect(sectionFromHash("")).toBeNull();
    expect(sectionFromHash("#settings")).toBeNull();
    expect(sectionFromHash("#__proto__")).toBeNull();
  });
});

describe("sections opened from the keyboard", () => {
  const key = (value: string, modifiers: Partial<Record<"metaKey" | "ctrlKey" | "altKey" | "shiftKey", boolean>> = {}) => ({
    key: value,
    metaKey: false,
    ctrlKey: false,
    altKey: false,
    shiftKey: false,
    ...modifiers,
  });

  it("opens the sections in sidebar order with Mod+1 to Mod+9", () => {
    expect(sectionForKey(key("1", { ctrlKey: true }), false)).toBe("notes");
    expect(sectionForKey(key("3", { ctrlKey: true }), false)).toBe("today");
    expect(sectionForKey(key("4", { ctrlKey: true }), false)).toBe("agent");
    expect(sectionForKey(key("4", { metaKey: true }), true)).toBe("agent");
    expect(sectionForKey(key("5", { ctrlKey: true }), false)).toBe("heartbeat");
    expect(sectionForKey(key("7", { ctrlKey: true }), false)).toBe("bridge");
    expect(sectionForKey(key("8", { ctrlKey: true }), false)).toBe("connections");
    expect(sectionForKey(key("8", { metaKey: true }), true)).toBe("connections");
    expect(sectionForKey(key("9", { ctrlKey: true }), false)).toBe("inbox");
  });

  it("ignores other keys, other modifiers and numbers past the last section", () => {
    expect(sectionForKey(key("4"), false)).toBeNull();
    expect(sectionForKey(key("4", { metaKey: true }), false)).toBeNull();
    expect(sectionForKey(key("4", { ctrlKey: true }), true)).toBeNull();
    expect(sectionForKey(key("4", { ctrlKey: true, shiftKey: true }), false)).toBeNull();
    expect(sectionForKey(key("4", { ctrlKey: true, altKey: true }), false)).toBeNull();
    expect(sectionForKey(key("0", { ctrlKey: true }), false)).toBeNull();
    expect(sectionForKey(key("a", { ctrlKey: true }), false)).toBeNull();
  });

  it("names the nine sections with a digit in the shortcuts sheet; Share links has none", () => {
    expect(SECTION_SHORTCUT.label).toBe("Mod+1 … Mod+9");
    expect(SECTION_SHORTCUT.what).toContain("Connections, Inbox");
    expect(SECTION_SHORTCUT.what).not.toContain("Share links");
  });
});
