/**
 * Work in a child process, for what must not run in the benchmark's own process: seeding (its
 * garbage would inflate the server's memory baseline) and sync clients (their documents would
 * count as the server's memory). The child is a TypeScript module run with the parent's tsx
 * loader; the two talk by request and answer over the IPC channel.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

interface Request {
  readonly id: number;
  readonly method: string;
  readonly input: unknown;
}

type Answer =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

export interface Child {
  readonly pid: number;
  /** Calls one of the child's handlers and resolves with its result. */
  call<T>(method: string, input?: unknown): Promise<T>;
  /** Asks the child to exit, and kills it if it does not within a few seconds. */
  close(): Promise<void>;
}

/**
 * Starts `module` (a file URL, e.g. `new URL("./x-child.ts", import.meta.url)`) as a child process.
 * `plainNode`: the module is JavaScript (a bundle, see bundle.ts) and runs without tsx's loader.
 */
export async function startChild(module: URL, { plainNode = false } = {}): Promise<Child> {
  // fork() passes on process.execArgv, which is where tsx put its loader: the child runs TypeScript too.
  const child: ChildProcess = fork(fileURLToPath(module), [], {
    ...(plainNode ? { execArgv: [] } : {}),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exited = true;
      for (const { reject } of pending.values()) reject(new Error(`child exited (code ${code}, signal ${signal}) before answering`));
      pending.clear();
      resolve();
    });
  });
  child.on("message", (message: Answer) => {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.ok) waiting.resolve(message.result);
    else waiting.reject(new Error(`child: ${message.error}`));
  });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  if (child.pid === undefined) throw new Error("child process has no pid");
  return {
    pid: child.pid,
    call: <T>(method: string, input?: unknown) =>
      new Promise<T>((resolve, reject) => {
        if (exited) {
          reject(new Error("child has exited"));
          return;
        }
        const id = nextId++;
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ id, method, input } satisfies Request);
      }),
    close: async () => {
      if (exited) return;
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

export type ChildHandlers = Record<string, (input: unknown) => Promise<unknown>>;

/**
 * The child's side: answers the parent's calls with `handlers`, and exits when the parent
 * disconnects (after `onExit`, for cleanup), so a crashed benchmark never leaves it behind.
 */
export function serveParent(handlers: ChildHandlers, onExit: () => Promise<void> = async () => {}): void {
  if (!process.send) throw new Error("this module runs as a child process of a benchmark");
  process.on("message", (message: Request) => {
    const handler = Object.hasOwn(handlers, message.method) ? handlers[message.method] : undefined;
    const answer = (value: Answer) => process.send?.(value);
    if (!handler) {
      answer({ id: message.id, ok: false, error: `unknown method ${message.method}` });
      return;
    }
    handler(message.input).then(
      (result) => answer({ id: message.id, ok: true, result }),
      (error: unknown) =>
        answer({ id: message.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
  process.once("disconnect", () => {
    onExit().finally(() => process.exit(0));
  });
}
