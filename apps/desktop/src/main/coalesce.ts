/**
 * Wraps a refresh so that calls never overlap and never pile up: a call while one runs schedules
 * exactly one more run after it (which sees every change made meanwhile). Events that trigger a
 * refresh can come in bursts; the tray needs only the latest state.
 */
export function coalesce(task: () => Promise<void>, onError: (error: unknown) => void): () => Promise<void> {
  let running: Promise<void> | null = null;
  let again = false;
  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await task();
        } catch (error) {
          onError(error);
        }
      } while (again);
      running = null;
    })();
    return running;
  };
  return run;
}
