import os from "node:os";
import type { LoadResult, LoadSettings } from "./load";

/** Benchmarks are only comparable on the same machine, so every report starts with it. */
export function describeMachine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? "unknown CPU";
  const memoryGiB = (os.totalmem() / 1024 ** 3).toFixed(1);
  return `machine: ${cpus.length} cores (${model}), ${memoryGiB} GiB RAM, ${os.platform()}/${os.arch()}, node ${process.version}`;
}

export function describeSettings(settings: LoadSettings): string {
  return (
    `settings: ${settings.connections} connections, pipelining 1, ` +
    `${settings.warmupSeconds} s warm-up per target, then ${settings.rounds} rounds of ${settings.roundSeconds} s per target, ` +
    "the targets alternating; autocannon in a worker thread"
  );
}

function formatInteger(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** Right-aligns every column but the first, so numbers line up by their last digit. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => {
        const width = widths[column] ?? cell.length;
        return column === 0 ? cell.padEnd(width) : cell.padStart(width);
      })
      .join("  ");
  const rule = widths.map((width) => "-".repeat(width)).join("  ");
  return [line(header), rule, ...rows.map(line)].join("\n");
}

/** One row per target: throughput, latency, and every way a request can fail to be a 2xx. */
export function formatLoadTable(results: readonly { name: string; result: LoadResult }[]): string {
  const header = ["target", "req/s", "p50 ms", "p99 ms", "mean ms", "requests", "errors", "non-2xx", "loop busy", "µs/req", "cpu µs/req"];
  const rows = results.map(({ name, result }) => [
    name,
    formatInteger(result.requestsPerSecond),
    String(result.p50Ms),
    String(result.p99Ms),
    result.meanMs.toFixed(2),
    formatInteger(result.completed),
    formatInteger(result.errors),
    formatInteger(result.non2xx),
    `${Math.round(result.eventLoopUtilization * 100)}%`,
    formatInteger(result.busyMicrosPerRequest),
    Number.isNaN(result.cpuMicrosPerRequest) ? "n/a" : formatInteger(result.cpuMicrosPerRequest),
  ]);
  const legend = [
    "latency: 2xx responses only, whole ms (autocannon's resolution)",
    "loop busy, µs/req: this process's main thread, where the servers run: how busy it was, and its busy time per request",
    "cpu µs/req: the main thread's CPU time per request (not counting time it waited for a core)",
  ].join("\n");
  return `${formatTable(header, rows)}\n${legend}`;
}

/** `{ "200": 5, "401": 3 }` → `200×5, 401×3`: says at a glance what the non-2xx responses were. */
export function formatStatusCodes(statusCodes: Readonly<Record<string, number>>): string {
  const entries = Object.entries(statusCodes).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? "none" : entries.map(([code, count]) => `${code}×${formatInteger(count)}`).join(", ");
}
