import { describe, expect, it } from "vitest";
import {
  actionWords,
  durationWords,
  formOf,
  intervalWords,
  runOutcome,
  sameForm,
  scheduleWords,
  settingsOf,
  timeZones,
} from "../src/renderer/heartbeat/heartbeat-format";
import type { HeartbeatActionItem, HeartbeatRunItem, HeartbeatSettings } from "../src/shared/desktop-api";

const HOURLY: HeartbeatSettings = {
  tier: "MESSAGES",
  schedule: { enabled: true, everyMinutes: 60, quietHours: { start: "22:00", end: "07:00" }, timezone: "Europe/Paris" },
};

function run(overrides: Partial<HeartbeatRunItem> = {}): HeartbeatRunItem {
  return {
    runId: 1,
    tier: "MESSAGES",
    status: "completed",
    source: "manual",
    dryRun: false,
    startedAt: "2026-01-01T10:00:00.000Z",
    completedAt: "2026-01-01T10:00:02.000Z",
    summary: "All is well",
    delivered: true,
    suppressed: false,
    suppressReason: null,
    conversationId: 3,
    toolCalls: 2,
    actionsCreated: 3,
    error: null,
    elapsedMs: 2000,
    ...overrides,
  };
}

describe("the heartbeat settings form", () => {
  it("shows whole hours in hours and anything else in minutes, and gives back what it was given", () => {
    const form = formOf(HOURLY);
    expect(form).toMatchObject({ every: "1", unit: "hours", quiet: true, quietStart: "22:00", quietEnd: "07:00" });
    expect(settingsOf(form)).toEqual({ settings: HOURLY });
    const minutes = formOf({ ...HOURLY, schedule: { ...HOURLY.schedule, everyMinutes: 90 } });
    expect(minutes).toMatchObject({ every: "90", unit: "minutes" });
  });

  it("keeps quiet hours to offer while they are off, and sends none", () => {
    const form = formOf({ ...HOURLY, schedule: { ...HOURLY.schedule, quietHours: null } });
    expect(form).toMatchObject({ quiet: false, quietStart: "22:00", quietEnd: "07:00" });
    const checked = settingsOf({ ...form, unit: "minutes", every: "30" });
    expect(checked).toEqual({ settings: { ...HOURLY, schedule: { ...HOURLY.schedule, everyMinutes: 30, quietHours: null } } });
  });

  it("says in words what is wrong with an interval or quiet hours", () => {
    const form = formOf(HOURLY);
    expect(settingsOf({ ...form, every: "" })).toEqual({ problem: '"Every" needs a whole number of hours.' });
    expect(settingsOf({ ...form, every: "1.5" })).toEqual({ problem: '"Every" needs a whole number of hours.' });
    expect(settingsOf({ ...form, unit: "minutes", every: "2" })).toMatchObject({ problem: expect.stringContaining("every 5 minutes") });
    expect(settingsOf({ ...form, every: "169" })).toMatchObject({ problem: expect.stringContaining("once a week") });
    expect(settingsOf({ ...form, every: "168" })).toMatchObject({ settings: { schedule: { everyMinutes: 10_080 } } });
    expect(settingsOf({ ...form, quietEnd: "22:00" })).toEqual({ problem: "Quiet hours need to start and end at different times." });
    expect(settingsOf({ ...form, quietEnd: "" })).toEqual({ problem: "Quiet hours need a start and an end." });
  });

  it("tells an edited form from the stored one", () => {
    const form = formOf(HOURLY);
    expect(sameForm(form, formOf(HOURLY))).toBe(true);
    expect(sameForm(form, { ...form, tier: "ACTIONS" })).toBe(false);
  });
});

describe("heartbeat words", () => {
  it("says the schedule in a line", () => {
    expect(scheduleWords(HOURLY)).toBe("Runs every hour, not from 22:00 to 07:00 (Europe/Paris).");
    expect(scheduleWords({ ...HOURLY, schedule: { ...HOURLY.schedule, enabled: false } })).toBe(
      "Off: the heartbeat runs only when you ask.",
    );
    expect(intervalWords(15)).toBe("every 15 minutes");
    expect(intervalWords(240)).toBe("every 4 hours");
  });

  it("says how a run ended", () => {
    expect(runOutcome(run())).toBe("Sent");
    expect(runOutcome(run({ delivered: false, dryRun: true }))).toBe("Dry run: nothing sent");
    expect(runOutcome(run({ delivered: false, suppressed: true }))).toBe("Not sent: repeats an earlier message");
    expect(runOutcome(run({ delivered: false, status: "failed" }))).toBe("Failed");
    expect(runOutcome(run({ delivered: false, status: "running" }))).toBe("Running…");
    expect(runOutcome(run({ delivered: false }))).toBe("Nothing sent");
  });

  it("says what an action did in words that agree with how it ended, never 'Sent the message' for one not sent", () => {
    const action = (type: string, status: HeartbeatActionItem["status"]): HeartbeatActionItem => ({
      actionId: 1,
      type,
      mode: "message",
      status,
      payload: "",
      result: "",
      createdAt: "2026-01-01T10:00:00.000Z",
    });
    const sent = run();
    expect(actionWords(action("send_message", "executed"), sent)).toBe("Sent the message");
    const kept = run({ delivered: false, suppressed: true, suppressReason: "the same as the 4:28 PM message" });
    expect(actionWords(action("send_message", "skipped"), kept)).toBe("Not sent: the same as the 4:28 PM message");
    expect(actionWords(action("send_message", "skipped"), run({ delivered: false, dryRun: true }))).toBe(
      "Not sent: a dry run sends nothing",
    );
    expect(actionWords(action("create_todo", "skipped"), run({ dryRun: true }))).toBe("Not done: creating a todo");
    expect(actionWords(action("create_todo", "failed"), sent)).toBe("Creating a todo failed");
    expect(actionWords(action("list_todos", "executed"), sent)).toBe("Looked at your todos");
  });

  it("says durations in words and offers the stored time zone even if the list lacks it", () => {
    expect(durationWords(12)).toBe("under a second");
    expect(durationWords(1_000)).toBe("1 second");
    expect(durationWords(2_340)).toBe("2 seconds");
    expect(durationWords(60_000)).toBe("1 minute");
    expect(durationWords(65_000)).toBe("1 minute 5 seconds");
    expect(durationWords(125_000)).toBe("2 minutes 5 seconds");
    const zones = timeZones("Etc/Unknown", "Europe/Paris");
    expect(zones).toContain("Etc/Unknown");
    expect(zones.filter((zone) => zone === "Europe/Paris")).toHaveLength(1);
  });
});
