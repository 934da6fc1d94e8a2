import { createHost } from "../host/host";
import { readDesktopVersion } from "./package-version";
import { startWebServer } from "./web-server";

// `npm run web`: the app in a browser, for development and for machines without Electron.
const port = Number(process.env.TANDEM_WEB_PORT ?? 5180);
const server = await startWebServer(createHost({ mode: "web", version: await readDesktopVersion() }), { port });
console.log(`Tandem (web mode) at ${server.url}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void server.close());
}
