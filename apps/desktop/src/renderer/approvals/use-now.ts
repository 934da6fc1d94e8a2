import { useEffect, useState } from "react";

/** The current time, re-rendering every `periodMs`: countdowns tick even when nothing else changes. */
export function useNow(periodMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), periodMs);
    return () => clearInterval(timer);
  }, [periodMs]);
  return now;
}
