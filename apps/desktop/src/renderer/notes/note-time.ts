const sameDay = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const otherDay = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", year: "numeric" });

/** When a note changed, briefly: the time today, the date otherwise. */
export function shortTime(iso: string, now: Date = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return date.toDateString() === now.toDateString() ? sameDay.format(date) : otherDay.format(date);
}

const full = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function fullTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : full.format(date);
}
