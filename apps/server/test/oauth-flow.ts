import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestServer } from "./harness";

/**
 * A browser and an OAuth client, spoken with fetch: a cookie jar, manual redirects, and the
 * forms of the server's own pages read from their HTML. The real-browser test drives the same
 * pages in Chromium.
 */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const index = pair?.indexOf("=") ?? -1;
      if (!pair || index < 0) continue;
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export function formField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match?.[1]) throw new Error(`no field ${name} in ${html.slice(0, 400)}`);
  return match[1];
}

export function formAction(html: string): string {
  const match = /<form method="post" action="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error(`no form in ${html.slice(0, 400)}`);
  return match[1].replace(/&amp;/g, "&");
}

export class Browser {
  readonly jar = new CookieJar();
  constructor(private readonly t: TestServer) {}

  async get(url: string): Promise<Response> {
    const response = await fetch(url.startsWith("http") ? url : `${this.t.server.url}${url}`, {
      redirect: "manual",
      headers: { cookie: this.jar.header() },
    });
    this.jar.store(response);
    return response;
  }

  async post(url: string, fields: Record<string, string>): Promise<Response> {
    const response = await fetch(url.startsWith("http") ? url : `${this.t.server.url}${url}`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: this.jar.header(), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
    this.jar.store(response);
    return response;
  }

  /** Follows redirects on this server; stops at the first one elsewhere (the client's callback) or at a page. */
  async follow(response: Response): Promise<{ response: Response; location?: string; html?: string }> {
    let current = response;
    for (let hops = 0; hops < 10; hops++) {
      const location = current.headers.get("location");
      if (current.status < 300 || current.status >= 400 || !location) return { response: current, html: await current.text() };
      const next = new URL(location, this.t.server.url);
      if (next.origin !== new URL(this.t.server.url).origin) return { response: current, location: next.href };
      current = await this.get(next.href);
    }
    throw new Error("too many redirects");
  }
}

export interface RegisteredClient {
  clientId: string;
  redirectUri: string;
}

export async function registerClient(
  t: TestServer,
  redirectUri = "http://127.0.0.1:53682/callback",
  name = "Test CLI",
): Promise<RegisteredClient> {
  const response = await t.fetch("/oauth/reg", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  const body = (await response.json()) as { client_id: string };
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${JSON.stringify(body)}`);
  return { clientId: body.client_id, redirectUri };
}

export function authorizeUrl(
  t: TestServer,
  client: RegisteredClient,
  challenge: string | null,
  scope: string,
  extra: Record<string, string> = {},
): string {
  const params = new URLSearchParams({
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    response_type: "code",
    scope,
    state: "st-123",
    ...(challenge ? { code_challenge: challenge, code_challenge_method: "S256" } : {}),
    ...extra,
  });
  return `${t.server.url}/oauth/auth?${params}`;
}

export async function tokenRequest(
  t: TestServer,
  fields: Record<string, string>,
): Promise<{ status: number; body: Record<string, string> }> {
  const response = await t.fetch("/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

/** Exchanges an authorization code at the token endpoint, as a public client with PKCE does (`extra`: a `resource`). */
export function exchangeCode(
  t: TestServer,
  client: RegisteredClient,
  code: string,
  verifier: string,
  extra: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, string> }> {
  return tokenRequest(t, {
    grant_type: "authorization_code",
    code,
    redirect_uri: client.redirectUri,
    client_id: client.clientId,
    code_verifier: verifier,
    ...extra,
  });
}

/**
 * The whole flow as a browser and a CLI do it: authorize, sign in (unless the browser already is),
 * consent with `decision`, and answer where the browser ends up (the client's callback).
 */
export async function authorize(
  t: TestServer,
  browser: Browser,
  client: RegisteredClient,
  options: {
    scope: string;
    username: string;
    password: string;
    decision?: "allow" | "deny";
    challenge: string;
    extra?: Record<string, string>;
  },
): Promise<URL> {
  let step = await browser.follow(await browser.get(authorizeUrl(t, client, options.challenge, options.scope, options.extra)));
  if (step.html?.includes('name="password"')) {
    const html = step.html;
    step = await browser.follow(
      await browser.post(formAction(html), { csrf: formField(html, "csrf"), username: options.username, password: options.password }),
    );
  }
  if (step.html?.includes('name="decision"')) {
    const html = step.html;
    step = await browser.follow(
      await browser.post(formAction(html), { csrf: formField(html, "csrf"), decision: options.decision ?? "allow" }),
    );
  }
  if (!step.location) throw new Error(`the flow did not return to the client: ${step.response.status} ${step.html?.slice(0, 600)}`);
  return new URL(step.location);
}

/** A CLI's loopback callback: answers a page and hands over the query each redirect to it carried, in order. */
export async function loopbackCallback(): Promise<{ server: Server; uri: string; next: () => Promise<URLSearchParams> }> {
  const waiting: Array<(query: URLSearchParams) => void> = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    res.writeHead(200, { "content-type": "text/plain" }).end("You can close this window.");
    // Only the callback itself: the browser's own requests (its favicon) must not stand in for the next redirect.
    if (url.pathname === "/callback") waiting.shift()?.(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, uri: `http://127.0.0.1:${port}/callback`, next: () => new Promise((resolve) => waiting.push(resolve)) };
}
