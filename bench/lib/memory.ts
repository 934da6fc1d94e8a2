/**
 * Memory readings of this process, taken after a full garbage collection so they show what is
 * retained, not what happens to be uncollected. `global.gc` is enabled at run time (the flag is
 * not set on the command line) through V8's flags and a fresh context.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** V8's `gc()`; with `flavor: "last-resort"` it also gives the heap's free pages back to the system. */
type Collect = (options?: { type: "major"; execution: "sync"; flavor: "regular" | "last-resort" }) => void;
let gc: Collect | undefined;

function collector(): Collect {
  if (!gc) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as Collect;
  }
  return gc;
}

export interface MemoryReading {
  readonly rss: number;
  readonly heapUsed: number;
  /** The heap V8 holds from the system: used, free space in its pages, and pages kept for new objects. */
  readonly heapTotal: number;
  /** Memory of ArrayBuffers and Buffers (outside the V8 heap), e.g. Yjs updates, sockets' buffers. */
  readonly external: number;
}

/**
 * Collects garbage (twice, letting finalizers run in between), then reads memory. `reduce`: the
 * second collection is V8's memory-reducing one (as its memory reducer runs on an idle process), which
 * also returns the heap pages that transient work grew and a plain full GC keeps reserved.
 */
export async function settledMemory({ reduce = false }: { reduce?: boolean } = {}): Promise<MemoryReading> {
  const run = collector();
  for (let i = 0; i < 2; i++) {
    if (reduce && i === 1) run({ type: "major", execution: "sync", flavor: "last-resort" });
    else run();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
  return { rss, heapUsed, heapTotal, external };
}

export function formatMiB(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

/** A signed difference in MiB, e.g. `+12.3 MiB`. */
export function formatDeltaMiB(bytes: number): string {
  return `${bytes >= 0 ? "+" : "−"}${(Math.abs(bytes) / 1024 ** 2).toFixed(1)} MiB`;
}
