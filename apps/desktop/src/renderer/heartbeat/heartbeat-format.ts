import {
  HEARTBEAT_EVERY_MINUTES_MAX,
  HEARTBEAT_EVERY_MINUTES_MIN,
  type HeartbeatActionItem,
  type HeartbeatRunItem,
  type HeartbeatSettings,
  type HeartbeatTier,
} from "../../shared/desktop-api";
import { toolLabel } from "../agent/tool-names";

/** The settings as the form edits them: the interval as a number and a unit, quiet hours kept while switched off. */
export interface SettingsForm {
  readonly tier: HeartbeatTier;
  readonly enabled: boolean;
  /** As typed: the field may be empty or hold a fraction while the owner edits it. */
  readonly every: string;
  readonly unit: "minutes" | "hours";
  readonly quiet: boolean;
  readonly quietStart: string;
  readonly quietEnd: string;
  readonly timezone: string;
}

/** What the quiet-hours fields show while there are none: a night. */
const DEFAULT_QUIET = { start: "22:00", end: "07:00" } as const;

export function formOf(settings: HeartbeatSettings): SettingsForm {
  const { enabled, everyMinutes, quietHours, timezone } = settings.schedule;
  const hours = everyMinutes % 60 === 0;
  return {
    tier: settings.tier,
    enabled,
    every: String(hours ? everyMinutes / 60 : everyMinutes),
    unit: hours ? "hours" : "minutes",
    quiet: quietHours !== null,
    quietStart: quietHours?.start ?? DEFAULT_QUIET.start,
    quietEnd: quietHours?.end ?? DEFAULT_QUIET.end,
    timezone,
  };
}

export function sameForm(a: SettingsForm, b: SettingsForm): boolean {
  return (Object.keys(a) as (keyof SettingsForm)[]).every((key) => a[key] === b[key]);
}

/** The form as the server takes it, or what is wrong with it, in words. */
export function settingsOf(form: SettingsForm): { settings: HeartbeatSettings } | { problem: string } {
  const every = Number(form.every);
  const everyMinutes = form.unit === "hours" ? every * 60 : every;
  if (form.every.trim() === "" || !Number.isInteger(every) || every < 1) {
    return { problem: `"Every" needs a whole number of ${form.unit}.` };
  }
  if (everyMinutes < HEARTBEAT_EVERY_MINUTES_MIN || everyMinutes > HEARTBEAT_EVERY_MINUTES_MAX) {
    return {
      problem: `The heartbeat can run every ${HEARTBEAT_EVERY_MINUTES_MIN} minutes at the most often, and once a week at the least.`,
    };
  }
  if (form.quiet && (form.quietStart === "" || form.quietEnd === "")) {
    return { problem: "Quiet hours need a start and an end." };
  }
  if (form.quiet && form.quietStart === form.quietEnd) {
    return { problem: "Quiet hours need to start and end at different times." };
  }
  return {
    settings: {
      tier: form.tier,
      schedule: {
        enabled: form.enabled,
        everyMinutes,
        quietHours: form.quiet ? { start: form.quietStart, end: form.quietEnd } : null,
        timezone: form.timezone,
      },
    },
  };
}

/** "every 30 minutes", "every hour", "every 4 hours". */
export function intervalWords(everyMinutes: number): string {
  if (everyMinutes % 60 !== 0) return everyMinutes === 1 ? "every minute" : `every ${everyMinutes} minutes`;
  const hours = everyMinutes / 60;
  return hours === 1 ? "every hour" : `every ${hours} hours`;
}

/** The schedule in one line: "Off: runs only when you ask", "Every hour, not from 22:00 to 07:00 (Europe/Paris)". */
export function scheduleWords(settings: HeartbeatSettings): string {
  const { enabled, everyMinutes, quietHours, timezone } = settings.schedule;
  if (!enabled) return "Off: the heartbeat runs only when you ask.";
  const interval = intervalWords(everyMinutes);
  const quiet = quietHours ? `, not from ${quietHours.start} to ${quietHours.end}` : "";
  return `Runs ${interval}${quiet} (${timezone}).`;
}

export const TIER_WORDS: Record<HeartbeatTier, { readonly title: string; readonly detail: string }> = {
  MESSAGES: {
    title: "Messages only",
    detail: "Reads your notes and todos and sends you one message. It changes nothing.",
  },
  ACTIONS: {
    title: "Messages and actions",
    detail: "May also create todos and notes and save to its memory, then tells you what it did.",
  },
};

export const TIERS = Object.keys(TIER_WORDS) as HeartbeatTier[];

/** How a run ended, in a few words. */
export function runOutcome(run: HeartbeatRunItem): string {
  if (run.status === "running") return "Running…";
  if (run.status === "requires_action") return "Waiting for your decision";
  if (run.status === "failed") return "Failed";
  if (run.dryRun) return "Dry run: nothing sent";
  if (run.delivered) return "Sent";
  if (run.suppressed) return "Not sent: repeats an earlier message";
  return "Nothing sent";
}

export function sourceWords(run: HeartbeatRunItem): string {
  return run.source === "schedule" ? "Scheduled" : "Manual";
}

export const ACTION_STATUS_WORDS: Record<HeartbeatActionItem["status"], string> = {
  executed: "Done",
  skipped: "Skipped",
  failed: "Failed",
};

/**
 * What an action did, in words that agree with how it ended: "Sent the message" only when it was
 * sent; "Not sent: the same as the 4:28 PM message" when the server kept the message back (its
 * reason, in its words), "Not done: creating a todo" for a write a dry run skipped.
 */
export function actionWords(action: HeartbeatActionItem, run: Pick<HeartbeatRunItem, "dryRun" | "suppressReason">): string {
  if (action.status === "executed") return toolLabel(action.type, "done");
  if (action.status === "failed") return toolLabel(action.type, "failed");
  if (action.type === "send_message") {
    if (run.dryRun) return "Not sent: a dry run sends nothing";
    return run.suppressReason ? `Not sent: ${run.suppressReason}` : "Not sent";
  }
  const doing = toolLabel(action.type, "running").replace(/…$/, "");
  return `Not done: ${doing.charAt(0).toLowerCase()}${doing.slice(1)}`;
}

const unit = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

/** How long something took: "under a second", "4 seconds", "1 minute 5 seconds". */
export function durationWords(ms: number): string {
  if (ms < 1000) return "under a second";
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return unit(seconds, "second");
  const minutes = Math.floor(seconds / 60);
  return seconds % 60 === 0 ? unit(minutes, "minute") : `${unit(minutes, "minute")} ${unit(seconds % 60, "second")}`;
}

/** The time zones the form offers: the browser's list, with the stored one and this computer's even if missing from it. */
export function timeZones(...wanted: string[]): string[] {
  const known = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return [...new Set([...wanted.filter(Boolean), ...known])].sort();
}
