import { describe, expect, it } from "vitest";
import { firstRunAt, inQuietHours, nextRunAfter, outsideQuietHours, startOfDay } from "./heartbeat-schedule";

const at = (iso: string) => new Date(iso);
const night = { start: "22:00", end: "07:00" };

describe("the heartbeat schedule's clock", () => {
  it("quiet hours are wall-clock times in the zone, and may span midnight", () => {
    // 23:30 and 06:59 in Paris (UTC+1 in winter) are quiet; 07:00 and 21:59 are not.
    expect(inQuietHours(at("2026-01-10T22:30:00Z"), night, "Europe/Paris")).toBe(true);
    expect(inQuietHours(at("2026-01-11T05:59:00Z"), night, "Europe/Paris")).toBe(true);
    expect(inQuietHours(at("2026-01-11T06:00:00Z"), night, "Europe/Paris")).toBe(false);
    expect(inQuietHours(at("2026-01-10T20:59:00Z"), night, "Europe/Paris")).toBe(false);
    expect(inQuietHours(at("2026-01-10T12:00:00Z"), { start: "09:00", end: "17:00" }, "UTC")).toBe(true);
    expect(inQuietHours(at("2026-01-10T12:00:00Z"), { start: "09:00", end: "09:00" }, "UTC")).toBe(false);
    expect(inQuietHours(at("2026-01-10T12:00:00Z"), null, "UTC")).toBe(false);
  });

  it("a run due in quiet hours moves to their end, across a daylight-saving change too", () => {
    expect(outsideQuietHours(at("2026-01-10T22:30:20Z"), night, "Europe/Paris").toISOString()).toBe("2026-01-11T06:00:00.000Z");
    // The night of 28–29 March 2026 Paris moves from UTC+1 to UTC+2: 07:00 is 05:00 UTC.
    expect(outsideQuietHours(at("2026-03-28T22:30:00Z"), night, "Europe/Paris").toISOString()).toBe("2026-03-29T05:00:00.000Z");
    // The night of 24–25 October it moves back to UTC+1: 07:00 is 06:00 UTC.
    expect(outsideQuietHours(at("2026-10-24T22:30:00Z"), night, "Europe/Paris").toISOString()).toBe("2026-10-25T06:00:00.000Z");
    const outside = at("2026-01-10T12:00:00Z");
    expect(outsideQuietHours(outside, night, "Europe/Paris")).toBe(outside);
  });

  it("the next run follows the interval's grid; slots missed while no server ran are covered by one run", () => {
    const schedule = { everyMinutes: 60, quietHours: null, timezone: "UTC" };
    const due = at("2026-01-10T10:00:00Z");
    expect(nextRunAfter(due, at("2026-01-10T10:00:03Z"), schedule).toISOString()).toBe("2026-01-10T11:00:00.000Z");
    expect(nextRunAfter(due, at("2026-01-10T13:20:00Z"), schedule).toISOString()).toBe("2026-01-10T14:00:00.000Z");
    expect(firstRunAt(at("2026-01-10T21:30:00Z"), { ...schedule, quietHours: night }).toISOString()).toBe("2026-01-11T07:00:00.000Z");
  });

  it("today starts at local midnight", () => {
    expect(startOfDay(at("2026-01-10T03:30:00Z"), "America/New_York").toISOString()).toBe("2026-01-09T05:00:00.000Z");
    expect(startOfDay(at("2026-01-10T03:30:45Z"), "UTC").toISOString()).toBe("2026-01-10T00:00:00.000Z");
  });
});
