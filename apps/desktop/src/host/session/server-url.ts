/**
 * The server's base URL as the app keeps it: `http(s)://host[:port]`, nothing else. A path, query
 * or credentials in what the person typed are refused rather than dropped, so a typo never
 * silently points the app somewhere else; a trailing slash is fine.
 */
export function normaliseServerUrl(input: string): string {
  const text = input.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL: enter the server's address, like https://tandem.example.com`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`The server URL must start with http:// or https:// (got ${url.protocol})`);
  }
  if (url.username || url.password) throw new Error("The server URL must not contain a user name or password");
  if (url.pathname !== "/" || url.search || url.hash) {
    throw new Error("The server URL is the address alone, without a path, query or fragment (like https://tandem.example.com)");
  }
  return url.origin;
}

/** The server's sync endpoint for a base URL from {@link normaliseServerUrl}. */
export function syncUrlOf(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.pathname = "/sync";
  return url.toString();
}
