import type { WebhookDeliveryItem, WebhookItem } from "../../shared/desktop-api";
import { fullTime } from "../notes/note-time";

interface EventWords {
  /** For the log and a row's list: "Message received". */
  readonly short: string;
  /** For the form's checkbox: when it is sent. */
  readonly long: string;
  /** Announced by parts of the server still being built: may be picked, not sent yet. */
  readonly later?: boolean;
}

const EVENT_WORDS: Record<string, EventWords> = {
  "message.received": { short: "Message received", long: "A message arrives in your inbox" },
  "grant.revoked": { short: "Grant revoked", long: "An agent-access grant of yours is revoked" },
  "grant.expired": { short: "Grant expired", long: "An agent-access grant of yours expires" },
  "heartbeat.run.completed": { short: "Heartbeat run ended", long: "A heartbeat run ends" },
  "escalation.requested": { short: "Approval asked", long: "An agent asks for your approval", later: true },
  "escalation.resolved": { short: "Approval answered", long: "Such an approval is answered", later: true },
  "budget.threshold": { short: "Budget threshold", long: "Spending reaches a budget threshold", later: true },
  "webhook.test": { short: "Test", long: "A test you sent" },
};

/** An event in words; one this app does not know yet is shown by its name. */
export function eventWords(type: string): EventWords {
  return EVENT_WORDS[type] ?? { short: type, long: type };
}

/** What a webhook is called in the list: its description, else its address. */
export function webhookName(webhook: Pick<WebhookItem, "description" | "url">): string {
  return webhook.description.trim() || webhook.url;
}

/** An attempt's outcome: "200", or why no status came. */
export function statusCodeWords(statusCode: number | null): string {
  return statusCode === null ? "no answer" : String(statusCode);
}

/** A delivery's state in words: "Delivered (200)", "Failed after 3 tries (500)", "Waiting: next try at …". */
export function deliveryStatusWords(delivery: WebhookDeliveryItem): string {
  const code = delivery.lastStatusCode === null ? "" : ` (${delivery.lastStatusCode})`;
  const tries = `${delivery.attemptCount} ${delivery.attemptCount === 1 ? "try" : "tries"}`;
  switch (delivery.status) {
    case "succeeded":
      return `Delivered${code}`;
    case "failed":
      return `Failed after ${tries}${code}`;
    default:
      if (delivery.attemptCount === 0) return "Sending…";
      return `Failed ${tries}${code}; ${delivery.nextAttemptAt ? `next try ${fullTime(delivery.nextAttemptAt)}` : "trying again"}`;
  }
}
