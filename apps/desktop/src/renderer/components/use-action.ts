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

/** An {@link Action} that says what it did: `done` holds the words the last action answered. */
export interface SaidAction {
  readonly action: Action;
  readonly done: string | null;
  setDone(done: string | null): void;
  /** Runs `work`, whose answer (in words) becomes `done`. */
  act(key: string, work: () => Promise<string>): void;
  /** The same for a form's submit: answers whether it went through (a form keeps its fields when not). */
  submitForm(key: string, work: () => Promise<string>): Promise<boolean>;
}

/** A panel's one-at-a-time actions with what each did, in words (Connections, Agents). */
export function useSaidAction(then: () => void = nothing): SaidAction {
  const action = useAction(then);
  const [done, setDone] = useState<string | null>(null);
  const act = (key: string, work: () => Promise<string>) => {
    setDone(null);
    void action.run(key, async () => setDone(await work()));
  };
  const submitForm = (key: string, work: () => Promise<string>) =>
    new Promise<boolean>((resolve) => {
      setDone(null);
      let succeeded = false;
      void action
        .run(key, async () => {
          setDone(await work());
          succeeded = true;
        })
        .then(() => resolve(succeeded));
    });
  return { action, done, setDone, act, submitForm };
}
