/**
 * How long until `expiresAt`, as `m:ss` (approvals live 5 minutes) or `h:mm:ss`; `0:00` once
 * passed. The server denies at expiry whatever the clock here says, so this is only a hint.
 */
export function timeLeft(expiresAt: string, now: number): string {
  const remaining = Math.max(0, Math.floor((Date.parse(expiresAt) - now) / 1000));
  if (Number.isNaN(remaining)) return "unknown";
  const hours = Math.floor(remaining / 3600);
  const minutes = Math.floor((remaining % 3600) / 60);
  const seconds = String(remaining % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/** A local wall-clock time for a timestamp (`14:05`), for "until …" labels. */
export function clockTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "unknown" : date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}
