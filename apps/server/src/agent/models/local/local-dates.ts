/** Due dates the `local` model understands in a request, relative to the caller's today. */

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

function addDays(isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

export interface DatePhrase {
  readonly date: string;
  /** The words that named it, to take out of a todo's title. */
  readonly phrase: string;
}

/** `today`, `tomorrow`, `next week`, a weekday (the next one), or an ISO date; the first found. */
export function findDueDate(text: string, today: string): DatePhrase | null {
  const iso = /\b(?:on |by |due )?(\d{4}-\d{2}-\d{2})\b/i.exec(text);
  if (iso?.[1] && !Number.isNaN(Date.parse(`${iso[1]}T00:00:00Z`))) return { date: iso[1], phrase: iso[0] };
  const relative = /\b(?:(?:on|by|due|for)\s+)?(today|tonight|tomorrow|next week)\b/i.exec(text);
  if (relative?.[1]) {
    const word = relative[1].toLowerCase();
    const days = word === "tomorrow" ? 1 : word === "next week" ? 7 : 0;
    return { date: addDays(today, days), phrase: relative[0] };
  }
  const weekday = new RegExp(`\\b(?:(?:on|by|due|for|next)\\s+)?(${WEEKDAYS.join("|")})\\b`, "i").exec(text);
  if (weekday?.[1]) {
    const target = WEEKDAYS.indexOf(weekday[1].toLowerCase());
    const current = new Date(`${today}T00:00:00Z`).getUTCDay();
    const ahead = (target - current + 7) % 7 || 7;
    return { date: addDays(today, ahead), phrase: weekday[0] };
  }
  return null;
}
