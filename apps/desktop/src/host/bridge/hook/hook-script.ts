/**
 * Claude Code's PreToolUse hook for the bridge, as the source of a plain Node ES module. The bridge
 * writes it into each task's private temp directory (hook-files.ts) rather than shipping it as a
 * file: a separate process runs it, so it must be a real file outside any bundle or asar archive,
 * and writing it per task keeps it in step with the app that asks.
 *
 * Claude runs it before every tool call with the call as JSON on stdin: `node hook.mjs <hook.json>`,
 * where hook.json is `{url, token, timeoutMs}`. It posts the call to the bridge's loopback endpoint
 * and prints the decision in the hook's JSON form. It fails closed: any error, refusal or timeout
 * blocks the call with exit code 2 (Claude's blocking error), which does not depend on our output.
 * (Written without template literals, so it can live in this one.)
 */
export const PRE_TOOL_USE_HOOK_SOURCE = `import { readFile } from "node:fs/promises";

const MAX_INPUT_BYTES = 1024 * 1024;

function block(reason) {
  process.stderr.write("Tandem blocked this tool call: " + reason + "\\n");
  process.exit(2);
}

function decide(decision, reason) {
  const output = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: reason } };
  process.stdout.write(JSON.stringify(output) + "\\n");
  process.exit(0);
}

async function readStdin() {
  const chunks = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += chunk.length;
    if (size > MAX_INPUT_BYTES) throw new Error("the hook input is too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function main() {
  const configPath = process.argv[2];
  if (!configPath) return block("the hook was started without its configuration");
  const config = JSON.parse(await readFile(configPath, "utf8"));
  if (typeof config.url !== "string" || typeof config.token !== "string") return block("the hook configuration is incomplete");
  const timeoutMs = Number.isFinite(config.timeoutMs) ? config.timeoutMs : 330000;
  // Whatever hangs (stdin, the desktop), the answer is a block before Claude's own hook timeout.
  setTimeout(() => block("no decision in time"), timeoutMs).unref();

  const input = await readStdin();
  JSON.parse(input); // Only well-formed hook input is forwarded.
  const response = await fetch(config.url, {
    method: "POST",
    headers: { authorization: "Bearer " + config.token, "content-type": "application/json" },
    body: input,
    redirect: "error",
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (response.status !== 200) return block("the desktop answered " + response.status);
  const answer = await response.json();
  const reason = typeof answer.reason === "string" ? answer.reason : undefined;
  if (answer.decision === "allow") return decide("allow", reason ?? "Allowed by the owner through Tandem");
  if (answer.decision === "deny") return decide("deny", reason ?? "Denied by the owner through Tandem");
  return block("the desktop gave no decision");
}

main().catch((error) => block(error instanceof Error ? error.message : String(error)));
`;
