import type { BriefingSummariesInput, Matrix, MatrixSource, StrategyItem } from "@tandem/core";
import { splitSentences } from "../../workspace/notes/extractive-summary";
import { htmlBlocks } from "./html-text";
import { MAX_QUADRANT_ITEMS, normaliseMatrix, normaliseSource, normaliseStrategies } from "./normalise";

/**
 * The deterministic strategies and priority matrix: the items of a briefing's summaries (list
 * items, or sentences where a summary has no list), scored for urgency and importance by the
 * words they carry. The same summaries always give the same answer.
 */

const SUMMARY_FIELDS = ["todoSummary", "calendarSummary", "emailAttentionSummary", "notesSummary", "statusQuoSummary"] as const;
/** Items read in all; the rest of an enormous input is not looked at. */
const MAX_ITEMS = 1000;
/** Characters of one item that are scored. */
const MAX_ITEM_CHARS = 500;

interface Item {
  /** The summary it came from, by its field name: normalised into a matrix source. */
  field: (typeof SUMMARY_FIELDS)[number];
  source: MatrixSource;
  text: string;
  /** The item's name: its text up to the first separator (" · ", " — ", " | ", " - "). */
  title: string;
  /** Position across all summaries, for stable ties. */
  position: number;
}

interface Signal {
  pattern: RegExp;
  urgency: number;
  importance: number;
  /** Why it matters, completing "“X” …"; absent for signals not worth saying. */
  reason?: string;
}

const SIGNALS: Signal[] = [
  { pattern: /\boverdue\b|\bpast due\b|\blate\b/, urgency: 5, importance: 0, reason: "is overdue" },
  { pattern: /\burgent\b|\basap\b|\bimmediately\b|\bcritical\b|\bemergency\b/, urgency: 4, importance: 1, reason: "is marked urgent" },
  {
    pattern: /\bdue today\b|\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening)\b|\bright now\b/,
    urgency: 3,
    importance: 0,
    reason: "is due today",
  },
  {
    pattern:
      /\bneeds? (?:a |your )?(?:reply|response|answer)\b|\bawaiting (?:your )?(?:reply|response)\b|\breply needed\b|\bplease (?:reply|respond)\b/,
    urgency: 3,
    importance: 0,
    reason: "is waiting for your reply",
  },
  {
    pattern: /\btomorrow\b|\bdue soon\b|\bsoon\b|\bdeadline\b|\bthis week\b|\bby (?:mon|tues|wednes|thurs|fri|satur|sun)day\b/,
    urgency: 2,
    importance: 0,
    reason: "is due soon",
  },
  { pattern: /\bhigh[ -]priority\b|\bpriority 1\b|\bp1\b|\bimportant\b|\bmust\b/, urgency: 1, importance: 3, reason: "is high priority" },
  { pattern: /\bpriority 2\b|\bp2\b/, urgency: 0, importance: 2 },
  {
    pattern:
      /\bclient\b|\bcustomer\b|\bboss\b|\bmanager\b|\bcontract\b|\blaunch\b|\brelease\b|\bdecision\b|\bbudget\b|\binterview\b|\bgoals?\b|\bproject\b|\bplan\b/,
    urgency: 0,
    importance: 1,
  },
  {
    pattern: /\blow[ -]priority\b|\bpriority [45]\b|\bfyi\b|\bnewsletter\b|\boptional\b|\bpromo(?:tion)?s?\b|\bunsubscribe\b/,
    urgency: -1,
    importance: -2,
  },
];

/** Where an item comes from sets its starting point: a todo is a commitment, an event is tied to a time. */
const BASE: Record<MatrixSource, { urgency: number; importance: number }> = {
  todo: { urgency: 0, importance: 3 },
  calendar: { urgency: 1, importance: 2 },
  email: { urgency: 0, importance: 1 },
  note: { urgency: 0, importance: 2 },
  status: { urgency: 0, importance: 1 },
};
const SOURCE_ORDER: MatrixSource[] = ["todo", "calendar", "email", "note", "status"];
const URGENT = 3;
const IMPORTANT = 3;

const WELLBEING = /\b(?:break|rest|sleep|exercise|gym|doctor|dentist|health|walk|lunch|family)\b/;

function titleOf(text: string): string {
  const head = text.split(/\s[·—–|-]\s/)[0]?.trim() ?? "";
  return head.length >= 3 ? head : text;
}

/** "Nothing is due today.", "No notes changed…": statements that there is nothing to do. */
const NOTHING = /^(?:no|nothing|none)\b/i;

/** The items of one summary: its list items if it has any (its paragraphs are then headings and counts), else its sentences. */
function summaryItems(html: string): string[] {
  const blocks = htmlBlocks(html);
  const listed = blocks.filter((block) => block.listItem);
  const texts = listed.length ? listed.map((block) => block.text) : blocks.flatMap((block) => splitSentences(block.text));
  return texts.map((text) => text.slice(0, MAX_ITEM_CHARS)).filter((text) => text.length >= 3 && !NOTHING.test(text));
}

/**
 * Every item of the summaries, once (the first mention of a title wins). The status overview
 * repeats the other summaries, so it is read only when they hold nothing.
 */
function briefingItems(summaries: BriefingSummariesInput): Item[] {
  const items: Item[] = [];
  const seen = new Set<string>();
  const read = (fields: readonly (typeof SUMMARY_FIELDS)[number][]) => {
    for (const field of fields) {
      for (const text of summaryItems(summaries[field] ?? "")) {
        const title = titleOf(text);
        const key = title.toLowerCase();
        if (seen.has(key) || items.length >= MAX_ITEMS) continue;
        seen.add(key);
        items.push({ field, source: normaliseSource(field), text, title, position: items.length });
      }
    }
  };
  read(SUMMARY_FIELDS.filter((field) => field !== "statusQuoSummary"));
  if (items.length === 0) read(["statusQuoSummary"]);
  return items;
}

interface Scored extends Item {
  urgency: number;
  importance: number;
  reasons: string[];
}

function score(item: Item): Scored {
  const text = item.text.toLowerCase();
  let { urgency, importance } = BASE[item.source];
  const reasons: string[] = [];
  for (const signal of SIGNALS) {
    if (!signal.pattern.test(text)) continue;
    urgency += signal.urgency;
    importance += signal.importance;
    if (signal.reason) reasons.push(signal.reason);
  }
  return { ...item, urgency, importance, reasons };
}

/** Most pressing first: urgency plus importance, then urgency, then todos before events before emails…, then order given. */
function ranked(summaries: BriefingSummariesInput): Scored[] {
  return briefingItems(summaries)
    .map(score)
    .sort(
      (a, b) =>
        b.urgency + b.importance - (a.urgency + a.importance) ||
        b.urgency - a.urgency ||
        SOURCE_ORDER.indexOf(a.source) - SOURCE_ORDER.indexOf(b.source) ||
        a.position - b.position,
    );
}

const quote = (text: string) => `“${text}”`;

/** "is overdue", "is high priority" → "is overdue and high priority". */
function joinReasons(reasons: string[]): string {
  const [first, ...rest] = reasons;
  const more = rest.map((reason) => reason.replace(/^is /, ""));
  if (more.length === 0) return first ?? "";
  return `${[first, ...more.slice(0, -1)].join(", ")} and ${more.at(-1)}`;
}

const SOURCE_NAMES: Record<MatrixSource, string> = {
  todo: "todos",
  calendar: "calendar",
  email: "email",
  note: "notes",
  status: "overview",
};

/** What to do about an item, as one line. */
function actionFor(item: Scored): { verb: string; action: string; category: string } {
  const name = quote(item.title);
  const wellbeing = WELLBEING.test(item.text.toLowerCase());
  switch (item.source) {
    case "todo":
      return item.reasons.includes("is overdue")
        ? {
            verb: "Catch up on",
            action: `Do ${name} first, or give it a new due date if it can wait.`,
            category: wellbeing ? "wellbeing" : "tasks",
          }
        : { verb: "Finish", action: `Set aside time today to finish ${name}.`, category: wellbeing ? "wellbeing" : "tasks" };
    case "calendar":
      return {
        verb: "Prepare for",
        action: `Review what ${name} needs from you before it starts.`,
        category: wellbeing ? "wellbeing" : "meetings",
      };
    case "email":
      return item.reasons.includes("is waiting for your reply")
        ? { verb: "Reply to", action: `Send a reply to ${name}, even a short one.`, category: "communication" }
        : { verb: "Deal with", action: `Read ${name} and decide whether it needs an answer.`, category: "communication" };
    case "note":
      return { verb: "Follow up on", action: `Re-read ${name} and turn its next step into a todo.`, category: "notes" };
    case "status":
      return { verb: "Address", action: `Take the first step on ${name}.`, category: wellbeing ? "wellbeing" : "planning" };
  }
}

/** Words for an urgency score; normalised like any other value. */
const urgencyWord = (urgency: number) => (urgency >= 6 ? "critical" : urgency >= URGENT ? "high" : urgency >= 1 ? "medium" : "low");

/** The top three things to do next; none when the summaries hold nothing. */
export function composeStrategies(summaries: BriefingSummariesInput): StrategyItem[] {
  return normaliseStrategies(
    ranked(summaries)
      .slice(0, 3)
      .map((item) => {
        const { verb, action, category } = actionFor(item);
        const why = item.reasons.length ? `${quote(item.title)} ${joinReasons(item.reasons)}` : `${quote(item.title)} is next`;
        return {
          title: `${verb} ${quote(item.title)}`,
          description: `${why} (from your ${SOURCE_NAMES[item.source]}).`,
          action,
          urgencyLevel: urgencyWord(item.urgency),
          category,
        };
      }),
  );
}

/** Every item in its quadrant of urgent × important, most pressing first; four empty lists for empty summaries. */
export function composeMatrix(summaries: BriefingSummariesInput): Matrix {
  const quadrants: Record<keyof Matrix, { title: string; source: string }[]> = {
    q1_urgent_important: [],
    q2_not_urgent_important: [],
    q3_urgent_not_important: [],
    q4_not_urgent_not_important: [],
  };
  for (const item of ranked(summaries)) {
    const urgent = item.urgency >= URGENT;
    const important = item.importance >= IMPORTANT;
    const quadrant = urgent
      ? important
        ? "q1_urgent_important"
        : "q3_urgent_not_important"
      : important
        ? "q2_not_urgent_important"
        : "q4_not_urgent_not_important";
    if (quadrants[quadrant].length < MAX_QUADRANT_ITEMS) quadrants[quadrant].push({ title: item.title, source: item.field });
  }
  return normaliseMatrix(quadrants);
}
