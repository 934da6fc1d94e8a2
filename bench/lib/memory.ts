/**
 * Memory readings of this process, taken after a full garbage collection so they show what is
 * retained, not what happens to be uncollected. `global.gc` is enabled at run time (the flag is
 * not set on the command line) through V8's flags and a fresh context.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;

function collector(): () => void {
  if (!gc) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  return gc;
}

export interface MemoryReading {
  readonly rss: number;
  readonly heapUsed: number;
  /** Memory of ArrayBuffers and Buffers (outside the V8 heap), e.g. Yjs updates, sockets' buffers. */
  readonly external: number;
}

/** Collects garbage (twice, letting finalizers run in between), then reads memory. */
export async function settledMemory(): Promise<MemoryReading> {
  const run = collector();
  for (let i = 0; i < 2; i++) {
    run();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external };
}

export function formatMiB(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

/** A signed difference in MiB, e.g. `+12.3 MiB`. */
export function formatDeltaMiB(bytes: number): string {
  return `${bytes >= 0 ? "+" : "−"}${(Math.abs(bytes) / 1024 ** 2).toFixed(1)} MiB`;
}
