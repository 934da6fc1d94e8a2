import { todayIn } from "@tandem/core/dates";
import { useSyncExternalStore } from "react";

/** The zone the user's system is set to; "today" is theirs, not UTC's. */
export function userTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

const today = () => todayIn(userTimeZone());

/** Rechecked every minute and when the window comes back, so views roll over at the user's midnight. */
function subscribe(onChange: () => void): () => void {
  const timer = setInterval(onChange, 60_000);
  window.addEventListener("focus", onChange);
  document.addEventListener("visibilitychange", onChange);
  return () => {
    clearInterval(timer);
    window.removeEventListener("focus", onChange);
    document.removeEventListener("visibilitychange", onChange);
  };
}

/** Today's date, `YYYY-MM-DD`, in the user's time zone. */
export function useToday(): string {
  return useSyncExternalStore(subscribe, today);
}
