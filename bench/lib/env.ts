import { cpus, loadavg } from "node:os";

/** Benchmark settings from the environment: a bad value stops the run rather than being ignored. */

/** A positive integer from `name`, or `fallback` when it is unset or empty. */
export function positiveIntFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** A non-empty string from `name`, or `fallback`. */
export function stringFromEnv(name: string, fallback: string, env: NodeJS.ProcessEnv = process.env): string {
  const raw = env[name];
  return raw === undefined || raw.trim() === "" ? fallback : raw.trim();
}

/**
 * The machine's load when the run starts: latency percentiles on a machine that is busy with
 * something else (tests, another benchmark) are not comparable with those of an idle one.
 */
export function describeLoad(): string {
  const [one, five] = loadavg();
  const cores = cpus().length;
  const busy = (one ?? 0) > cores * 0.5 ? "  (busy: other work shares the CPUs; expect noisier tails)" : "";
  return `load average: ${(one ?? 0).toFixed(2)} (1 min), ${(five ?? 0).toFixed(2)} (5 min) on ${cores} cores${busy}`;
}
