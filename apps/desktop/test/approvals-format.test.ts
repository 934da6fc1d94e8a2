import { describe, expect, it } from "vitest";
import { describeGrant } from "../src/renderer/approvals/grant-row";
import { timeLeft } from "../src/renderer/approvals/time-left";
import type { GrantItem } from "../src/shared/desktop-api";
import { personLabel } from "../src/shared/person-label";

describe("the Approvals view's wording", () => {
  const now = Date.parse("2026-03-01T10:00:00.000Z");

  it("counts down to an expiry, never below zero", () => {
    expect(timeLeft("2026-03-01T10:05:00.000Z", now)).toBe("5:00");
    expect(timeLeft("2026-03-01T10:00:09.900Z", now)).toBe("0:09");
    expect(timeLeft("2026-03-01T11:30:05.000Z", now)).toBe("1:30:05");
    expect(timeLeft("2026-03-01T09:00:00.000Z", now)).toBe("0:00");
    expect(timeLeft("not a date", now)).toBe("unknown");
  });

  it("names people by name, else by principal id", () => {
    expect(personLabel("Alice", "7")).toBe("Alice");
    expect(personLabel(null, "7")).toBe("user 7");
    expect(personLabel("  ", "7")).toBe("user 7");
  });

  it("says which way a grant goes and what state it is in", () => {
    const grant: GrantItem = {
      grantId: "cs_1",
      direction: "incoming",
      peerPrincipalId: "7",
      peerName: "alice",
      status: "pending",
      requestedAt: "2026-03-01T10:00:00.000Z",
      grantExpiresAt: null,
    };
    expect(describeGrant(grant, "alice")).toMatch(/^alice asks to send requests to your agent \(asked at .+\)$/);
    expect(describeGrant({ ...grant, direction: "outgoing" }, "alice")).toBe(
      "You asked to send requests to alice's agent (waiting for them)",
    );
    const active = { ...grant, status: "active" as const, grantExpiresAt: "2026-03-01T10:30:00.000Z" };
    expect(describeGrant(active, "alice")).toMatch(/^alice can send requests to your agent until .+$/);
    expect(describeGrant({ ...active, direction: "outgoing" }, "alice")).toMatch(/^You can send requests to alice's agent until .+$/);
  });
});
