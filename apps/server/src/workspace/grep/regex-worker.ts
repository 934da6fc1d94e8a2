import { parentPort } from "node:worker_threads";
import { buildMatcher, type GrepOptions, grepTexts } from "./line-matcher";

/** Runs regex grep off the main thread, so a runaway pattern can be stopped by terminating us. */
parentPort?.on("message", (request: { options: GrepOptions; texts: string[] }) => {
  parentPort?.postMessage(grepTexts(request.texts, buildMatcher(request.options), request.options));
});
