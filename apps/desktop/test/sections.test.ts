import { describe, expect, it } from "vitest";
import { sectionFromHash } from "../src/renderer/layout/sections";

describe("sections named by the URL hash", () => {
  it("opens the section the hash names, and ignores anything else", () => {
    expect(sectionFromHash("#approvals")).toBe("approvals");
    expect(sectionFromHash("bridge")).toBe("bridge");
    expect(sectionFromHash("")).toBeNull();
    expect(sectionFromHash("#settings")).toBeNull();
    expect(sectionFromHash("#__proto__")).toBeNull();
  });
});
