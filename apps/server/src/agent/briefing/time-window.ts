import { todayIn } from "@tandem/core";
import { badRequest } from "../../http/errors";

/** The stretch of time a briefing looks back over, and how its sentences name it. */
export interface TimeWindow {
  /** The caller's phrase, as given (trimmed). */
  label: string;
  start: Date;
  end: Date;
  /** "in the last 24 hours", "today", "this week"… */
  description: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The longest window: notes changed over more than a year are not a briefing. */
const MAX_WINDOW_MS = 366 * DAY;

const UNIT_MS: Record<string, number> = { minute: 60_000, hour: HOUR, day: DAY, week: 7 * DAY, month: 30 * DAY };
const UNIT_NAMES: [RegExp, string][] = [
  [/^(?:minutes?|mins?)$/, "minute"],
  [/^(?:hours?|hrs?|h)$/, "hour"],
  [/^(?:days?|d)$/, "day"],
  [/^(?:weeks?|wks?|w)$/, "week"],
  [/^months?$/, "month"],
];

/** How far `timeZone` is ahead of UTC at `instant`, in ms. */
function zoneOffset(timeZone: string, instant: number): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(new Date(instant));
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(part("year"), part("month") - 1, part("day"), part("hour"), part("minute"), part("second"));
  return wall - Math.floor(instant / 1000) * 1000;
}

/** The instant a calendar day (`YYYY-MM-DD`) begins in `timeZone`. */
export function startOfDay(date: string, timeZone: string): Date {
  const wall = Date.parse(`${date}T00:00:00.000Z`);
  // The offset at the guess, then at the corrected instant: right on both sides of a DST change.
  const guess = wall - zoneOffset(timeZone, wall);
  return new Date(wall - zoneOffset(timeZone, guess));
}

/** `YYYY-MM-DD` moved by whole days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + days * DAY).toISOString().slice(0, 10);
}

const unknownPhrase = (phrase: string) =>
  badRequest(
    "invalid_time_duration",
    `timeDuration "${phrase}" is not understood: use "last N hours", "last N days", "last N weeks", "last N months", "today", "yesterday", "this week" or "this month"`,
  );

/**
 * Reads a window phrase: `last 24 hours`, `past 3 days`, `last week`, `7d`, `today`,
 * `yesterday`, `this week` (from Monday), `this month`; days begin at midnight in `timeZone`.
 * Anything else is a 400 naming what is accepted.
 */
export function parseTimeWindow(phrase: string, timeZone: string, now: Date): TimeWindow {
  const label = phrase.trim();
  const text = label.toLowerCase().replace(/\s+/g, " ");
  const today = todayIn(timeZone, now);
  const since = (start: Date, description: string): TimeWindow => ({ label, start, end: now, description });
  switch (text) {
    case "today":
      return since(startOfDay(today, timeZone), "today");
    case "yesterday":
      return { label, start: startOfDay(addDays(today, -1), timeZone), end: startOfDay(today, timeZone), description: "yesterday" };
    case "this week": {
      const weekday = (new Date(`${today}T00:00:00.000Z`).getUTCDay() + 6) % 7;
      return since(startOfDay(addDays(today, -weekday), timeZone), "this week");
    }
    case "this month":
      return since(startOfDay(`${today.slice(0, 8)}01`, timeZone), "this month");
  }
  const match = /^(?:(?:the )?(?:last|past) )?(\d{1,6}|an?|one)? ?([a-z]+)$/.exec(text);
  const unit = match && UNIT_NAMES.find(([pattern]) => pattern.test(match[2] as string))?.[1];
  // "days" alone names no window; "last day" and "3 days" do.
  if (!match || !unit || (match[1] === undefined && !/^(?:the )?(?:last|past) /.test(text))) throw unknownPhrase(label);
  const count = match[1] === undefined || !/^\d/.test(match[1]) ? 1 : Number(match[1]);
  const length = count * (UNIT_MS[unit] as number);
  if (count < 1 || length > MAX_WINDOW_MS) {
    throw badRequest("invalid_time_duration", `timeDuration "${label}" must be between 1 minute and 366 days`);
  }
  const description = `in the last ${count === 1 ? unit : `${count} ${unit}s`}`;
  return since(new Date(now.getTime() - length), description);
}
