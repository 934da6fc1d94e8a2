/**
 * An endpoint is online while heartbeats arrive: one that has not been seen for the presence
 * timeout (60 s by default) is offline and out of routing. Revoked endpoints are never online.
 */
export function isEndpointOnline(
  endpoint: { last_seen_at: string | null; revoked_at: string | null },
  nowMs: number,
  presenceTimeoutMs: number,
): boolean {
  if (endpoint.revoked_at !== null || endpoint.last_seen_at === null) return false;
  return nowMs - Date.parse(endpoint.last_seen_at) < presenceTimeoutMs;
}
