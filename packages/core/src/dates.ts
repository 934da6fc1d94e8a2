/** Whether a string names a real IANA time zone (as Intl knows them). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Today's date, `YYYY-MM-DD`, in a time zone. */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  // en-CA formats dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(now);
}

/** Whether `YYYY-MM-DD` is a real calendar date (no 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** Due dates the apps and the API accept: a typo such as year 20260 or 0202 is refused, not stored. */
export const EARLIEST_DUE_DATE = "1900-01-01";
export const LATEST_DUE_DATE = "2199-12-31";

/** Why `value` cannot be a due date, or null when it can. */
export function dueDateProblem(value: string): string | null {
  if (!isCalendarDate(value)) return "must be a date YYYY-MM-DD";
  if (value < EARLIEST_DUE_DATE || value > LATEST_DUE_DATE) return `must be between ${EARLIEST_DUE_DATE} and ${LATEST_DUE_DATE}`;
  return null;
}
