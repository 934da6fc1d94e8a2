import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { DesktopApi } from "../shared/desktop-api";
import { HOST_API_PATH } from "../shared/desktop-api-transport";
import { createHostApiHandler } from "./host-api-handler";
import { sendJsonError } from "./http";
import { createStaticFileHandler } from "./static-files";

export interface WebServerConfig {
  /** Loopback by default: the host API trusts whoever can reach it. */
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** The built renderer: `electron-vite build` writes it to this package's `out/renderer`. */
  rendererDir: string;
}

export const DEFAULT_WEB_SERVER_CONFIG: Readonly<WebServerConfig> = Object.freeze({
  hostname: "127.0.0.1",
  port: 0,
  rendererDir: fileURLToPath(new URL("../../out/renderer", import.meta.url)),
});

export interface RunningWebServer {
  /** `http://hostname:port` */
  readonly url: string;
  readonly port: number;
  /** Stops listening and drops open connections (browsers keep idle ones alive). */
  close(): Promise<void>;
}

/**
 * Web mode: serves the renderer to a browser and answers its desktop API calls with `host`, the
 * same host Electron's main process would run.
 */
export async function startWebServer(host: DesktopApi, overrides: Partial<WebServerConfig> = {}): Promise<RunningWebServer> {
  const config: WebServerConfig = { ...DEFAULT_WEB_SERVER_CONFIG, ...overrides };
  const answerHostApi = createHostApiHandler(host);
  const serveRenderer = createStaticFileHandler(config.rendererDir);
  // Known once listening; until then no request can arrive.
  let allowedHosts: ReadonlySet<string> = new Set();
  const server = createServer((request, response) => {
    // DNS rebinding: a page on another site can point its own name at 127.0.0.1 and then call us
    // "same-origin"; its requests still carry that name in Host.
    if (!allowedHosts.has(request.headers.host ?? "")) {
      sendJsonError(response, 403, "forbidden_host", "Reach web mode through the address it listens on");
      return;
    }
    const handle = request.url?.startsWith(HOST_API_PATH) ? answerHostApi : serveRenderer;
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
      } else {
        sendJsonError(response, 500, "internal_error", error instanceof Error ? error.message : String(error));
      }
    });
  });
  const { port } = await listen(server, config.port, config.hostname);
  allowedHosts = new Set([`${config.hostname}:${port}`, `localhost:${port}`]);
  return {
    url: `http://${config.hostname}:${port}`,
    port,
    close: () =>
      new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, port: number, hostname: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
