/**
 * The heartbeat schedule's clock arithmetic: an interval, and quiet hours given as wall-clock
 * times in the owner's time zone. Pure functions of their arguments, so the scheduler and the
 * policy compute the same instants.
 */

export interface QuietHours {
  /** HH:MM, local. */
  readonly start: string;
  readonly end: string;
}

const MINUTE_MS = 60_000;
const DAY_MINUTES = 24 * 60;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Minutes since local midnight of `instant` in `timeZone`. */
function localMinutes(instant: Date, timeZone: string): number {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    formatters.set(timeZone, format);
  }
  let hour = 0;
  let minute = 0;
  for (const part of format.formatToParts(instant)) {
    if (part.type === "hour") hour = Number(part.value);
    else if (part.type === "minute") minute = Number(part.value);
  }
  return hour * 60 + minute;
}

const clockMinutes = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/** The start of the minute `instant` is in (every zone in use today is offset by whole minutes). */
const minuteStart = (ms: number) => ms - (((ms % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);

export function inQuietHours(instant: Date, quiet: QuietHours | null, timeZone: string): boolean {
  if (!quiet) return false;
  const start = clockMinutes(quiet.start);
  const end = clockMinutes(quiet.end);
  if (start === end) return false;
  const now = localMinutes(instant, timeZone);
  return start < end ? now >= start && now < end : now >= start || now < end;
}

/** A difference of wall-clock minutes as the shortest way round the day, in (-720, 720]. */
const aroundTheClock = (minutes: number) => {
  const m = ((minutes % DAY_MINUTES) + DAY_MINUTES) % DAY_MINUTES;
  return m > DAY_MINUTES / 2 ? m - DAY_MINUTES : m;
};

/**
 * `instant`, or the end of the quiet hours it falls in. Counting wall-clock minutes forward lands
 * an hour off when a daylight-saving change falls in between; the landing is then moved onto the
 * end's wall-clock time (unless that time does not exist that day).
 */
export function outsideQuietHours(instant: Date, quiet: QuietHours | null, timeZone: string): Date {
  if (!quiet) return instant;
  const end = clockMinutes(quiet.end);
  let at = instant;
  for (let step = 0; step < 4 && inQuietHours(at, quiet, timeZone); step++) {
    const ahead = (end - localMinutes(at, timeZone) + DAY_MINUTES) % DAY_MINUTES || DAY_MINUTES;
    const landed = new Date(minuteStart(at.getTime()) + ahead * MINUTE_MS);
    const corrected = new Date(landed.getTime() - aroundTheClock(localMinutes(landed, timeZone) - end) * MINUTE_MS);
    at = corrected > at && !inQuietHours(corrected, quiet, timeZone) ? corrected : landed;
  }
  return at;
}

export interface ScheduleShape {
  readonly everyMinutes: number;
  readonly quietHours: QuietHours | null;
  readonly timezone: string;
}

/** The first run of a schedule switched on (or changed) at `now`: one interval later, outside quiet hours. */
export function firstRunAt(now: Date, schedule: ScheduleShape): Date {
  return outsideQuietHours(new Date(now.getTime() + schedule.everyMinutes * MINUTE_MS), schedule.quietHours, schedule.timezone);
}

/**
 * The run after the one due at `due`, claimed at `now`: the next slot on the interval's grid after
 * `now`, so slots missed while no server ran are not made up one by one (one run covers them),
 * moved out of quiet hours.
 */
export function nextRunAfter(due: Date, now: Date, schedule: ScheduleShape): Date {
  const every = schedule.everyMinutes * MINUTE_MS;
  const slots = Math.max(1, Math.floor((now.getTime() - due.getTime()) / every) + 1);
  return outsideQuietHours(new Date(due.getTime() + slots * every), schedule.quietHours, schedule.timezone);
}

/** Local midnight of `now`'s day in `timeZone`, as an instant (to the minute). */
export function startOfDay(now: Date, timeZone: string): Date {
  return new Date(minuteStart(now.getTime()) - localMinutes(now, timeZone) * MINUTE_MS);
}
