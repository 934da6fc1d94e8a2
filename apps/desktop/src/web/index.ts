import { homedir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startHost } from "../host/host";
import { FileSecretStore } from "../host/session/file-secret-store";
import { readDesktopVersion } from "./package-version";
import { startWebServer } from "./web-server";

// `npm run desktop:web`: the app in a browser, for development and for machines without Electron.
const { values } = parseArgs({
  options: { port: { type: "string" }, "data-dir": { type: "string" } },
  allowPositionals: false,
});
const port = Number(values.port ?? process.env.TANDEM_WEB_PORT ?? 5180);
const dataDir = path.resolve(values["data-dir"] ?? process.env.TANDEM_DESKTOP_DATA_DIR ?? path.join(homedir(), ".tandem-desktop-web"));
const host = await startHost({ mode: "web", version: await readDesktopVersion(), dataDir, secrets: new FileSecretStore(dataDir) });
const server = await startWebServer(host.api, { port });
console.log(`Tandem (web mode) at ${server.url}, data in ${dataDir}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void server.close().then(() => host.close());
  });
}
