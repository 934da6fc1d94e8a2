import { readFile } from "node:fs/promises";
import { builtFile, RUNS_BUILT } from "../../server-files";

/**
 * The guest page's copy of `@tandem/core/rich-text`: the very Markdown reader and renderer the
 * desktop's Agent and Inbox use, bundled for the browser as one script that defines
 * `TandemRichText.appendMarkdown`. The build (scripts/build.mjs) writes it to dist/, so a server
 * running its build only reads it; from the sources (development, in-process tests) it is bundled
 * on first use with the build's own options, so it cannot drift from the code either way. Kept in
 * memory: it is derived from the code, not state, so every instance serves the same.
 */
let script: Promise<string> | undefined;

export function guestRichTextScript(): Promise<string> {
  script ??= (RUNS_BUILT ? readFile(builtFile("guest-rich-text.js"), "utf8") : bundleFromSources()).catch((error: unknown) => {
    script = undefined; // a failure is tried again on the next page, not remembered
    throw error;
  });
  return script;
}

async function bundleFromSources(): Promise<string> {
  const [{ build }, { guestRichTextOptions, guestRichTextCode }] = await Promise.all([
    import("esbuild"),
    import("../../../scripts/build.mjs"),
  ]);
  return guestRichTextCode(await build({ ...guestRichTextOptions, write: false }));
}
