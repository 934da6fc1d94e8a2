import { randomBytes } from "node:crypto";
import type { Selectable } from "kysely";
import type { SecretBox } from "../crypto/secret-box";
import type { WebhookEndpointsTable } from "../db/schema";

/** Bound as associated data: a sealed webhook secret opens nowhere else. */
const PURPOSE = "webhook-secret";
/** After a rotation the old secret signs beside the new one this long, while receivers switch. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks libraries read it. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export function sealWebhookSecret(box: SecretBox, secret: string): string {
  return box.seal(secret, PURPOSE);
}

/** The secrets that sign a delivery now: the current one, and the previous one during its overlap. */
export function endpointSecrets(
  box: SecretBox,
  endpoint: Pick<Selectable<WebhookEndpointsTable>, "secret_sealed" | "previous_secret_sealed" | "previous_secret_expires_at">,
  now: Date,
): string[] {
  const current = box.open(endpoint.secret_sealed, PURPOSE);
  const { previous_secret_sealed: previous, previous_secret_expires_at: until } = endpoint;
  if (previous && until && Date.parse(until) > now.getTime()) return [current, box.open(previous, PURPOSE)];
  return [current];
}
