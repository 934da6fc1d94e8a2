import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * The guest page's copy of `@tandem/core/rich-text`: the very Markdown reader and renderer the
 * desktop's Agent and Inbox use, bundled for the browser as one script that defines
 * `TandemRichText.appendMarkdown`. Built once per process on first use from the sources this
 * server runs (so it cannot drift from them) and kept in memory: it is derived from the code, not
 * state, so every instance builds the same.
 */
let script: Promise<string> | undefined;

export function guestRichTextScript(): Promise<string> {
  script ??= bundle().catch((error: unknown) => {
    script = undefined; // a failed build is tried again on the next page, not remembered
    throw error;
  });
  return script;
}

async function bundle(): Promise<string> {
  const result = await build({
    stdin: {
      contents: 'export { appendMarkdown } from "@tandem/core/rich-text";',
      resolveDir: fileURLToPath(new URL(".", import.meta.url)),
      loader: "ts",
    },
    bundle: true,
    write: false,
    format: "iife",
    globalName: "TandemRichText",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.text ?? "";
  // It goes inside a <script> element: nothing in it may close that element.
  if (code === "" || /<\/script/i.test(code)) throw new Error("the guest page's rich-text script could not be built");
  return code;
}
