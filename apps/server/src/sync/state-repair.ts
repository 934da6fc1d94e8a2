import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * The stack a repair gets: Yjs recurses a few frames per level when it deletes or collects a
 * subtree, so this covers trees hundreds of thousands of levels deep.
 */
const REPAIR_STACK_MB = 256;

const YJS_PATH = createRequire(import.meta.url).resolve("yjs");

// Loading with garbage collection on turns deleted content, however deep, into flat tombstones.
const REPAIR_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Y = require(workerData.yjs);
const doc = new Y.Doc();
Y.applyUpdate(doc, workerData.state);
parentPort.postMessage(Y.encodeStateAsUpdate(doc));
`;

/** Whether an error is V8 running out of stack, as Yjs does on content nested thousands deep. */
export function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && error.message.includes("call stack");
}

/**
 * Rewrites a state that Yjs cannot load on a normal stack: one whose deleted content nests
 * thousands of levels deep (written before the server bounded nesting), which Yjs deletes and
 * collects recursively on load. A worker with a large stack loads it with garbage collection on
 * and encodes it again: the same content and history, with the deleted subtree collected.
 */
export function repairState(state: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(REPAIR_SOURCE, {
      eval: true,
      workerData: { yjs: YJS_PATH, state },
      resourceLimits: { stackSizeMb: REPAIR_STACK_MB },
    });
    worker.once("message", (repaired: Uint8Array) => {
      resolve(new Uint8Array(repaired));
      void worker.terminate();
    });
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`state repair exited with ${code}`)));
  });
}
