/** Whole days from `from` to `to`, both `YYYY-MM-DD` (calendar dates: no time zone, no DST). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** "Today", "Tomorrow", "Yesterday", or the date in the user's locale (with the year when it is not this year's). */
export function formatDueDate(dueDate: string, today: string, locale?: string): string {
  const days = daysBetween(today, dueDate);
  if (days === 0) return "Today";
  if (days === 1) return "Tomorrow";
  if (days === -1) return "Yesterday";
  const sameYear = dueDate.slice(0, 4) === today.slice(0, 4);
  // The date is a calendar date: formatting its UTC midnight in UTC shows that very day anywhere.
  return new Intl.DateTimeFormat(locale, {
    timeZone: "UTC",
    weekday: "short",
    day: "numeric",
    month: "short",
    ...(sameYear ? {} : { year: "numeric" }),
  }).format(new Date(`${dueDate}T00:00:00Z`));
}

/** When a todo was completed, in the user's own time zone. */
export function formatCompletedAt(completedAt: string, locale?: string): string {
  const date = new Date(completedAt);
  if (Number.isNaN(date.getTime())) return "";
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short" }).format(date);
}

export const PRIORITIES = [1, 2, 3, 4] as const;

/** Short labels ("P1"), as on the rows; the select spells them out. */
export function priorityLabel(priority: number): string {
  return `P${priority}`;
}

export function priorityDescription(priority: number | null): string {
  if (priority === null) return "No priority";
  if (priority === 1) return "P1 (highest)";
  if (priority === 4) return "P4 (lowest)";
  return priorityLabel(priority);
}
