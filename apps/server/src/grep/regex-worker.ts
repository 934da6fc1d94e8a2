import { parentPort } from "node:worker_threads";
import { buildMatcher, type GrepOptions, grepText } from "./line-matcher";

/** Runs regex grep off the main thread, so a runaway pattern can be stopped by terminating us. */
parentPort?.on("message", (request: { options: GrepOptions; texts: string[] }) => {
  const matcher = buildMatcher(request.options);
  parentPort?.postMessage(request.texts.map((text) => grepText(text, matcher, request.options)));
});
