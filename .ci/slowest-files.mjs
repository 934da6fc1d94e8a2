// Prints the slowest test files of a vitest JSON report with their wall time, so CI's budget stays visible.
// Usage: node .ci/slowest-files.mjs <report.json> [count]
import { readFileSync } from "node:fs";
import path from "node:path";

const [reportPath, countArg] = process.argv.slice(2);
const count = Number(countArg ?? 15);
try {
  const report = JSON.parse(readFileSync(reportPath, "utf8"));
  const files = report.testResults
    .map((r) => ({ file: path.relative(process.cwd(), r.name), seconds: (r.endTime - r.startTime) / 1000 }))
    .filter((f) => Number.isFinite(f.seconds))
    .sort((a, b) => b.seconds - a.seconds);
  const total = files.reduce((sum, f) => sum + f.seconds, 0);
  console.log(
    `::: the ${Math.min(count, files.length)} slowest of ${files.length} test files (${total.toFixed(0)} s in all, summed over workers)`,
  );
  for (const f of files.slice(0, count)) console.log(`${f.seconds.toFixed(1).padStart(8)} s  ${f.file}`);
} catch (error) {
  console.log(`::: no timings: ${error instanceof Error ? error.message : error}`);
}
