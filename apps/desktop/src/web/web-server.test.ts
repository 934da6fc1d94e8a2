import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Host, startHost } from "../host/host";
import { FileSecretStore } from "../host/session/file-secret-store";
import { type RunningWebServer, startWebServer } from "./web-server";

const JSON_CONTENT = { "content-type": "application/json" };

interface RawResponse {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** Plain `node:http`, because fetch would normalise the hostile paths these tests send. */
function send(
  server: RunningWebServer,
  method: string,
  rawPath: string,
  body?: string,
  extraHeaders: Record<string, string> = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { host: `127.0.0.1:${server.port}`, ...extraHeaders };
    const outgoing = request({ host: "127.0.0.1", port: server.port, method, path: rawPath, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers["content-type"],
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

describe("web server", () => {
  let workDir: string;
  let server: RunningWebServer;
  let host: Host;

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), "tandem-web-server-"));
    const rendererDir = path.join(workDir, "renderer");
    await mkdir(path.join(rendererDir, "assets"), { recursive: true });
    await writeFile(path.join(rendererDir, "index.html"), "<!doctype html><title>Tandem</title>");
    await writeFile(path.join(rendererDir, "assets", "app.js"), "export {};");
    await writeFile(path.join(workDir, "secret.txt"), "outside the renderer");
    const dataDir = path.join(workDir, "data");
    host = await startHost({ mode: "web", version: "1.2.3", dataDir, secrets: new FileSecretStore(dataDir) });
    server = await startWebServer(host.api, { rendererDir });
  });

  afterAll(async () => {
    await server?.close();
    await host?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  describe("renderer files", () => {
    it("serves index.html at / and assets by path, with their content types", async () => {
      const index = await send(server, "GET", "/");
      expect(index).toMatchObject({ status: 200, contentType: "text/html; charset=utf-8", body: "<!doctype html><title>Tandem</title>" });
      expect(await send(server, "GET", "/assets/app.js")).toMatchObject({ status: 200, contentType: "text/javascript; charset=utf-8" });
    });

    it("never serves a file outside the renderer directory", async () => {
      for (const hostile of ["/../secret.txt", "/..%2fsecret.txt", "/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt"]) {
        const response = await send(server, "GET", hostile);
        expect(response.status, hostile).toBe(404);
        expect(response.body, hostile).not.toContain("outside the renderer");
      }
    });

    it("answers 404 for missing files and malformed paths", async () => {
      expect((await send(server, "GET", "/missing.js")).status).toBe(404);
      expect((await send(server, "GET", "/%E0%A4%A")).status).toBe(404);
    });
  });

  it("refuses requests addressed to another host name, as DNS rebinding would send them", async () => {
    for (const rawPath of ["/", "/__host/getAppInfo"]) {
      const response = await send(server, "POST", rawPath, "[]", { ...JSON_CONTENT, host: `attacker.example:${server.port}` });
      expect(response.status, rawPath).toBe(403);
      expect(JSON.parse(response.body)).toMatchObject({ success: false, error: "forbidden_host" });
    }
    expect((await send(server, "GET", "/", undefined, { host: `localhost:${server.port}` })).status).toBe(200);
  });

  describe("host API", () => {
    it("answers a call with the host's result", async () => {
      const response = await send(server, "POST", "/__host/getAppInfo", "[]", JSON_CONTENT);
      expect(response.status).toBe(200);
      expect(JSON.parse(response.body)).toEqual({ success: true, result: { name: "Tandem", version: "1.2.3", mode: "web" } });
    });

    it("sends a string result as the body itself, unescaped", async () => {
      const text = '{"format":2,"title":"سلام 👋 \\ \n"}';
      const api = { ...host.api, getWorkspaceOutline: async () => text };
      const plain = await startWebServer(api, { rendererDir: path.join(workDir, "renderer") });
      try {
        const response = await send(plain, "POST", "/__host/getWorkspaceOutline", "[]", JSON_CONTENT);
        expect(response).toEqual({ status: 200, contentType: "text/plain; charset=utf-8", body: text });
        // Anything else is still JSON (null here: signed out).
        const none = await send(server, "POST", "/__host/getWorkspaceOutline", "[]", JSON_CONTENT);
        expect(JSON.parse(none.body)).toEqual({ success: true, result: null });
      } finally {
        await plain.close();
      }
    });

    it("rejects calls a browser would send from another site without a preflight", async () => {
      const response = await send(server, "POST", "/__host/getAppInfo", "[]", { "content-type": "text/plain" });
      expect(response.status).toBe(415);
      expect(JSON.parse(response.body)).toMatchObject({ success: false, error: "unsupported_media_type" });
    });

    it("names what is wrong with a bad call", async () => {
      const cases = [
        { method: "POST", path: "/__host/deleteEverything", body: "[]", status: 404, error: "unknown_method" },
        { method: "GET", path: "/__host/getAppInfo", body: undefined, status: 405, error: "method_not_allowed" },
        { method: "POST", path: "/__host/getAppInfo", body: "{}", status: 400, error: "invalid_arguments" },
        { method: "POST", path: "/__host/getAppInfo", body: "[", status: 400, error: "invalid_arguments" },
        // The host's own refusals are the caller's 4xx too, never a 500: a bad argument, a sign-in that cannot be done.
        { method: "POST", path: "/__host/signInWithApiKey", body: "[{}]", status: 400, error: "invalid_input" },
        {
          method: "POST",
          path: "/__host/signInWithApiKey",
          body: '[{"serverUrl":"not a url","apiKey":"k"}]',
          status: 422,
          error: "host_refused",
        },
        { method: "POST", path: "/__host/pollSignInPairing", body: "[]", status: 409, error: "host_refused" },
      ];
      for (const { method, path: callPath, body, status, error } of cases) {
        const response = await send(server, method, callPath, body, JSON_CONTENT);
        expect(response.status, `${method} ${callPath} ${body}`).toBe(status);
        expect(JSON.parse(response.body)).toMatchObject({ success: false, error });
      }
    });
  });
});
