const UNITS: [limitSeconds: number, seconds: number, unit: string][] = [
  [3600, 60, "minute"],
  [86_400, 3600, "hour"],
  [7 * 86_400, 86_400, "day"],
  [30 * 86_400, 7 * 86_400, "week"],
  [365 * 86_400, 30 * 86_400, "month"],
  [Number.POSITIVE_INFINITY, 365 * 86_400, "year"],
];

/** "just now", "5 minutes ago", "yesterday", "3 weeks ago"… for a past ISO timestamp. */
export function relativeTime(iso: string, now: Date = new Date()): string {
  const seconds = Math.max(0, Math.round((now.getTime() - new Date(iso).getTime()) / 1000));
  if (seconds < 60) return "just now";
  for (const [limit, size, unit] of UNITS) {
    if (seconds < limit) {
      const count = Math.floor(seconds / size);
      if (unit === "day" && count === 1) return "yesterday";
      return `${count} ${unit}${count === 1 ? "" : "s"} ago`;
    }
  }
  return "long ago";
}
