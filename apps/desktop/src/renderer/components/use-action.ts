import { useCallback, useEffect, useRef, useState } from "react";
import { errorMessage } from "./error-message";

export interface Action {
  /** A key naming the action in flight (e.g. `Accept:cs_…`), so only its button shows it; null when idle. */
  readonly running: string | null;
  readonly error: string | null;
  /** Runs `work` unless another action is in flight; `then` follows it, success or not (usually a refresh). */
  run(key: string, work: () => Promise<unknown>): Promise<void>;
}

const nothing = () => {};

/**
 * One action at a time per view (an owner's decision, a sign-in, a snapshot): a double click must
 * not send two. Its error is shown until the next action starts.
 */
export function useAction(then: () => void = nothing): Action {
  const [running, setRunning] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // A ref, not the state: two clicks in one frame both see the state before either re-render.
  const busy = useRef(false);
  const thenRef = useRef(then);
  useEffect(() => {
    thenRef.current = then;
  });
  const run = useCallback(async (key: string, work: () => Promise<unknown>) => {
    if (busy.current) return;
    busy.current = true;
    setRunning(key);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      busy.current = false;
      setRunning(null);
      thenRef.current();
    }
  }, []);
  return { running, error, run };
}
