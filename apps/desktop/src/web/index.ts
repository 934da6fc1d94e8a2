import { homedir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Host, startHost } from "../host/host";
import { FileSecretStore } from "../host/session/file-secret-store";
import { buildIfChanged } from "./build-stamp";
import { readDesktopVersion } from "./package-version";
import { startWebServer } from "./web-server";

// `npm run desktop:web`: the app in a browser, for development and for machines without Electron.
const { values } = parseArgs({
  options: { port: { type: "string" }, "data-dir": { type: "string" }, rebuild: { type: "boolean" } },
  allowPositionals: false,
});

// The renderer is served from out/: build it when the sources changed since the last build (or --rebuild).
const started = Date.now();
try {
  if ((await buildIfChanged({ force: values.rebuild })) === "built")
    console.log(`Built the app in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (error) {
  console.error(`Tandem (web mode) could not build the app: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const port = Number(values.port ?? process.env.TANDEM_WEB_PORT ?? 5180);
const dataDir = path.resolve(values["data-dir"] ?? process.env.TANDEM_DESKTOP_DATA_DIR ?? path.join(homedir(), ".tandem-desktop-web"));

let host: Host;
try {
  host = await startHost({ mode: "web", version: await readDesktopVersion(), dataDir, secrets: new FileSecretStore(dataDir) });
} catch (error) {
  // The local database in use or damaged: the message says what to do; a stack trace would not help.
  console.error(`Tandem (web mode) could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
const server = await startWebServer(host.api, { port });
console.log(`Tandem (web mode) at ${server.url}, data in ${dataDir}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    const unsynced = host.unsyncedDocuments();
    if (unsynced > 0) console.log(`${unsynced} document(s) not on the server yet: kept here, sent at the next start.`);
    // The host stores every open document before it answers.
    void server.close().then(() => host.close());
  });
}
