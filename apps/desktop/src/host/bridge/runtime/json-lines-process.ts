import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** How much of a CLI's stderr is kept to explain a failure. */
const STDERR_TAIL = 2_000;
/** After SIGTERM, how long a CLI gets before SIGKILL. */
const KILL_GRACE_MS = 2_000;

export interface JsonLinesProcessOptions {
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
  /** The CLI's name in error messages. */
  readonly label: string;
}

/**
 * Runs a CLI that prints one JSON object per line (Claude Code's stream-json, Codex's --json) and
 * yields each parsed line. Never through a shell: the prompt is one argument, so nothing in it can
 * be interpreted. Throws if the CLI cannot start or exits with a failure.
 */
export async function* runJsonLines(command: string, args: readonly string[], options: JsonLinesProcessOptions): AsyncGenerator<unknown> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
    windowsHide: true,
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const exited = new Promise<{ code: number | null; error: Error | null }>((resolve) => {
    child.once("error", (error) => resolve({ code: null, error }));
    child.once("close", (code) => resolve({ code, error: null }));
  });
  const kill = () => {
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS).unref();
  };
  options.signal.addEventListener("abort", kill, { once: true });
  try {
    const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      const trimmed = line.trim();
      if (!trimmed.startsWith("{")) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch {
        continue; // A partial or foreign line; the CLIs print one complete object per line.
      }
      yield parsed;
    }
    const { code, error } = await exited;
    if (error) {
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      throw new Error(
        missing ? `${options.label} is not installed (${command} was not found)` : `${options.label} could not start: ${error.message}`,
      );
    }
    if (options.signal.aborted) throw new Error(`${options.label} was stopped`);
    if (code !== 0) throw new Error(`${options.label} exited with code ${code}${stderr.trim() ? `: ${stderr.trim()}` : ""}`);
  } finally {
    options.signal.removeEventListener("abort", kill);
    if (child.exitCode === null && child.signalCode === null) kill();
  }
}
