import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage } from "./error-message";

export interface Polled<T> {
  /** The last answer; kept while a later load fails, so the view does not flicker away. */
  readonly data: T | undefined;
  /** Why the last load failed, or null. */
  readonly error: string | null;
  /** Loads again now (after an action) and restarts the period. */
  refresh(): void;
}

/**
 * Loads `load()` now and then every `intervalMs` after the previous load finished (never two at
 * once: a slow host must not pile calls up). The host API has no push channel to the renderer, so
 * views that follow the server's state poll it.
 */
export function usePolled<T>(load: () => Promise<T>, intervalMs: number): Polled<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null }>({ data: undefined, error: null });
  const [generation, setGeneration] = useState(0);
  // The latest `load` without restarting the loop each render (callers pass inline closures).
  const loadRef = useRef(load);
  useEffect(() => {
    loadRef.current = load;
  });

  // `generation` is refresh()'s restart signal: a new value reloads at once and restarts the period.
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const data = await loadRef.current();
        if (!stopped) setState({ data, error: null });
      } catch (error) {
        if (!stopped) setState((previous) => ({ data: previous.data, error: errorMessage(error) }));
      }
      if (!stopped) timer = setTimeout(run, intervalMs);
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [intervalMs, generation]);

  const refresh = useCallback(() => setGeneration((value) => value + 1), []);
  return { ...state, refresh };
}
