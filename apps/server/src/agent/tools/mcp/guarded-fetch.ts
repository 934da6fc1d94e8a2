// The one `fetch` every request to a remote tool server, and to the authorization server it names,
// goes through (the SDK's transports and its OAuth functions take it as their `fetch` option):
// Node's own http/https client, so that the connection goes to the very address the guard checked
// (`lookup` answers with it), redirects followed here and re-checked at each hop, and a response
// body that stops at a size cap instead of filling memory.

import type { LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { AddressRefused, vettedAddresses } from "./address-guard";

export interface GuardedFetchOptions {
  /** Skip the address check (TANDEM_ALLOW_PRIVATE_TOOL_SERVERS=1: single-machine setups, tests). */
  allowPrivate: boolean;
  /** The most bytes one response body may have; a longer one fails as a network error. */
  maxResponseBytes: number;
  /** How long to wait for a response's headers, in ms. */
  headersTimeoutMs: number;
  maxRedirects?: number;
  /** Which addresses count as public; tests widen it to reach a server on loopback as if it were public. */
  isPublic?: (address: string) => boolean;
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NO_BODY = new Set([204, 205, 304]);

/** A `lookup` that answers only with the addresses the guard checked, so the socket goes there. */
function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0]?.address, addresses[0]?.family);
  }) as LookupFunction;
}

function bodyBytes(body: RequestInit["body"]): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), "utf8");
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(new Uint8Array(body));
  throw new TypeError("unsupported request body for a remote tool server");
}

/** A web stream over a Node response that errors, and drops the socket, past `maxBytes`. */
function cappedStream(res: http.IncomingMessage, maxBytes: number): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let total = 0;
      res.on("data", (chunk: Buffer) => {
        if (done) return;
        total += chunk.length;
        if (total > maxBytes) {
          done = true;
          controller.error(new Error(`the response is larger than ${maxBytes} bytes`));
          res.destroy();
          return;
        }
        controller.enqueue(new Uint8Array(chunk));
      });
      res.on("end", () => {
        if (!done) controller.close();
        done = true;
      });
      res.on("error", (error) => {
        if (!done) controller.error(error);
        done = true;
      });
    },
    cancel() {
      done = true;
      res.destroy();
    },
  });
}

async function requestOnce(
  url: URL,
  init: { method: string; headers: Headers; body: Buffer | undefined; signal: AbortSignal | undefined },
  options: GuardedFetchOptions,
): Promise<Response> {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new AddressRefused(`${url.protocol} URLs are not fetched`);
  const addresses = options.allowPrivate ? undefined : await vettedAddresses(url.hostname, options.isPublic);
  init.signal?.throwIfAborted();
  const client = url.protocol === "https:" ? https : http;
  const headers: Record<string, string> = {};
  init.headers.forEach((value, key) => {
    headers[key] = value;
  });
  if (init.body && !headers["content-length"]) headers["content-length"] = String(init.body.length);
  return new Promise<Response>((resolve, reject) => {
    const req = client.request(url, {
      method: init.method,
      headers,
      signal: init.signal,
      ...(addresses ? { lookup: pinnedLookup(addresses) } : {}),
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${options.headersTimeoutMs} ms`)), options.headersTimeoutMs);
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.on("response", (res) => {
      clearTimeout(timer);
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 599) {
        res.destroy();
        reject(new Error(`unexpected HTTP status ${status}`));
        return;
      }
      const responseHeaders = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
        responseHeaders.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
      }
      const noBody = NO_BODY.has(status) || init.method === "HEAD";
      if (noBody) res.resume();
      resolve(
        new Response(noBody ? null : cappedStream(res, options.maxResponseBytes), {
          status,
          statusText: res.statusMessage,
          headers: responseHeaders,
        }),
      );
    });
    req.end(init.body);
  });
}

/** A `fetch` for remote tool servers: guarded addresses, pinned connections, checked redirects, capped bodies. */
export function guardedFetch(options: GuardedFetchOptions): FetchLike {
  const maxRedirects = options.maxRedirects ?? 5;
  return async (input, init = {}) => {
    let url = new URL(String(input));
    let method = (init.method ?? "GET").toUpperCase();
    let body = bodyBytes(init.body);
    const headers = new Headers(init.headers);
    for (let hop = 0; ; hop++) {
      const response = await requestOnce(url, { method, headers, body, signal: init.signal ?? undefined }, options);
      const location = response.headers.get("location");
      if (!REDIRECTS.has(response.status) || !location || init.redirect === "manual") return response;
      await response.body?.cancel();
      if (hop >= maxRedirects) throw new Error(`more than ${maxRedirects} redirects`);
      const next = new URL(location, url);
      // Credentials are for the origin they were sent to, not wherever it points.
      if (next.origin !== url.origin) {
        headers.delete("authorization");
        headers.delete("cookie");
      }
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
        headers.delete("content-type");
        headers.delete("content-length");
      }
      url = next;
    }
  };
}
