import type { DesktopApi } from "../shared/desktop-api";

/**
 * The host calls the first screen waits for, one after another when made by the components that need
 * them (who is signed in, then where the documents are, then the notes view's outline). page-start.ts
 * makes them all as the page starts, and each component takes its answer from here instead.
 */
const EARLY_CALLS = {
  getSession: (api: DesktopApi) => api.getSession(),
  getLocalSync: (api: DesktopApi) => api.getLocalSync(),
  getOutlineFirstScreen: (api: DesktopApi) => api.getWorkspaceOutline({ firstScreen: true }),
  // The badges of the first frame (what waits for the owner): read from the server as the page starts.
  getStatus: (api: DesktopApi) => api.getStatus({ fresh: true }),
};

/** The early calls themselves: as {@link EARLY_CALLS}, but where the documents and the status are only asked once the session says signed in. */
function makeCalls(api: DesktopApi): Record<EarlyCall, Promise<unknown>> {
  const getSession = EARLY_CALLS.getSession(api);
  // Signed out there are none: the host's refusal would be an error in the page's log (web mode: a 500).
  const getLocalSync = getSession.then((info) =>
    info.state === "signed_in" ? EARLY_CALLS.getLocalSync(api) : Promise.reject(new Error("signed out")),
  );
  const getStatus = getSession.then((info) =>
    info.state === "signed_in" ? EARLY_CALLS.getStatus(api) : Promise.reject(new Error("signed out")),
  );
  return { getSession, getLocalSync, getOutlineFirstScreen: EARLY_CALLS.getOutlineFirstScreen(api), getStatus };
}

export type EarlyCall = keyof typeof EARLY_CALLS;
type Answer<K extends EarlyCall> = Awaited<ReturnType<(typeof EARLY_CALLS)[K]>>;

interface Made {
  readonly api: DesktopApi;
  readonly answer: Promise<unknown>;
  /** Set once the answer has arrived (a failure leaves it unset). */
  arrived?: { readonly value: unknown };
}

const made = new Map<EarlyCall, Made>();

export function makeEarlyCalls(api: DesktopApi): void {
  for (const [key, answer] of Object.entries(makeCalls(api)) as [EarlyCall, Promise<unknown>][]) {
    const entry: Made = { api, answer };
    // Whoever takes it handles a failure; until then it is not an unhandled rejection.
    entry.answer.then(
      (value) => {
        entry.arrived = { value };
      },
      () => {},
    );
    made.set(key, entry);
  }
}

/**
 * Resolves once every early call has been answered (they usually are by the time the page's code has
 * run), or after `maxWaitMs`. main.tsx renders then, so that the first frame can be the first screen
 * itself rather than a "Starting…" frame and a frame per answer after it.
 */
export function earlyCallsAnswered(maxWaitMs: number): Promise<void> {
  const answers = [...made.values()].map((entry) => entry.answer.catch(() => {}));
  return Promise.race([Promise.all(answers).then(() => {}), new Promise<void>((resolve) => setTimeout(resolve, maxWaitMs))]);
}

/**
 * The early call's answer if it has already arrived (and was not taken yet), for a component's first
 * render; it still takes it with {@link takeEarly} in an effect, as if it had not peeked.
 */
export function peekEarly<K extends EarlyCall>(api: DesktopApi, key: K): Answer<K> | undefined {
  const early = made.get(key);
  return early?.api === api ? (early.arrived?.value as Answer<K> | undefined) : undefined;
}

/**
 * The early call's answer (to the first who asks; a later asker calls anew), or the call made now.
 * An early call that failed is made again: it may have been made before it could succeed (where the
 * documents are, asked while signed out).
 */
export function takeEarly<K extends EarlyCall>(api: DesktopApi, key: K): Promise<Answer<K>> {
  const early = made.get(key);
  made.delete(key);
  const call = () => EARLY_CALLS[key](api) as Promise<Answer<K>>;
  if (early?.api !== api) return call();
  return (early.answer as Promise<Answer<K>>).catch(call);
}
