// Prints "<passed> <failed>" from vitest's JSON report; a missing or unreadable report is one failure.
import { readFileSync } from "node:fs";

try {
  const report = JSON.parse(readFileSync(process.argv[2], "utf8"));
  const failedSuites = report.testResults.filter((r) => r.status === "failed" && r.assertionResults.length === 0).length;
  console.log(`${report.numPassedTests} ${report.numFailedTests + failedSuites}`);
} catch {
  console.log("0 1");
}
