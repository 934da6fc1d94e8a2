import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type Collect = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

let collect: Collect | null | undefined;

/**
 * Gives memory back to the system after a burst of work (a first replication of thousands of
 * notes). V8 lets its heap grow with a high allocation rate and keeps what it grew after the
 * garbage is gone: the host would go on holding hundreds of MB it no longer uses. A full
 * collection of the memory-reducing kind ("last resort") returns the free pages; it takes a moment
 * (tens of ms on a heap of a few hundred MB), so call it only when a burst is over.
 *
 * `gc` is V8's own, exposed at run time the way test runners do (`--expose-gc`); where that is not
 * possible this does nothing.
 */
export function releaseMemory(): void {
  if (collect === undefined) {
    try {
      setFlagsFromString("--expose-gc");
      collect = ((globalThis as { gc?: Collect }).gc ?? runInNewContext("gc")) as Collect;
    } catch {
      collect = null;
    }
  }
  collect?.({ type: "major", execution: "sync", flavor: "last-resort" });
}
