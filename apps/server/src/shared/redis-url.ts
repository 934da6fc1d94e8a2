import type { RedisOptions } from "ioredis";

/**
 * ioredis's connection options for a `redis://` or `rediss://` URL, read with the WHATWG URL
 * parser. Given the URL itself, ioredis reads it with Node's legacy `url.parse`, which prints a
 * deprecation warning (DEP0169) at every start now that ioredis is bundled into the server's
 * build rather than loaded from `node_modules`, where Node keeps it quiet.
 *
 * What it reads is what ioredis reads from such a URL: user and password, host and port, the
 * database number in the path, TLS for `rediss:`, and `family` from the query.
 */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const parsed = new URL(url);
  const options: RedisOptions = {};
  if (parsed.hostname) options.host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  if (parsed.port) options.port = Number(parsed.port);
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  const db = parsed.pathname.slice(1);
  if (db) options.db = Number(db);
  const family = Number.parseInt(parsed.searchParams.get("family") ?? "", 10);
  if (!Number.isNaN(family)) options.family = family;
  if (parsed.protocol === "rediss:") options.tls = {};
  return options;
}
