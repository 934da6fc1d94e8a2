import {
  MATRIX_SOURCES,
  type Matrix,
  type MatrixItem,
  type MatrixSource,
  STRATEGY_CATEGORIES,
  type StrategyCategory,
  type StrategyItem,
  URGENCY_LEVELS,
  type UrgencyLevel,
} from "@tandem/core";
import { clip } from "../../workspace/notes/extractive-summary";

/**
 * The one way any strategy or matrix reaches a client, whether the deterministic composer or a
 * model wrote it: values outside the documented closed sets are mapped onto them, text is made
 * one bounded line, and anything unusable is dropped.
 */

const TITLE_CHARS = 120;
const DESCRIPTION_CHARS = 400;
const ACTION_CHARS = 200;
/** Items per quadrant: a matrix is read at a glance. */
export const MAX_QUADRANT_ITEMS = 10;
export const MAX_STRATEGIES = 3;

function pick<T extends string>(value: unknown, allowed: readonly T[], synonyms: [RegExp, T][], fallback: T): T {
  if (typeof value !== "string") return fallback;
  const text = value.trim().toLowerCase();
  if ((allowed as readonly string[]).includes(text)) return text as T;
  return synonyms.find(([pattern]) => pattern.test(text))?.[1] ?? fallback;
}

const URGENCY_SYNONYMS: [RegExp, UrgencyLevel][] = [
  [/critical|urgent|asap|immediate|emergency|overdue|blocker|severe/, "critical"],
  [/high|important|soon|today|major/, "high"],
  [/medium|moderate|normal|mid|average|standard/, "medium"],
  [/low|minor|later|someday|trivial|none|optional/, "low"],
];

/** Onto critical | high | medium | low; a number reads as a priority (1 critical … 4 and above low). */
export function normaliseUrgency(value: unknown): UrgencyLevel {
  if (typeof value === "number" && Number.isFinite(value)) {
    return value <= 1 ? "critical" : value <= 2 ? "high" : value <= 3 ? "medium" : "low";
  }
  return pick(value, URGENCY_LEVELS, URGENCY_SYNONYMS, "medium");
}

const CATEGORY_SYNONYMS: [RegExp, StrategyCategory][] = [
  [/health|wellbeing|well-being|wellness|break|rest|sleep|exercise|personal|family|self/, "wellbeing"],
  [/meet|calendar|event|call|appointment|schedule/, "meetings"],
  [/mail|inbox|message|reply|respond|communicat|contact|follow/, "communication"],
  [/note|doc|writ|read|research|knowledge|journal/, "notes"],
  [/task|todo|to-do|chore|errand|work|deliver/, "tasks"],
  [/plan|strateg|focus|goal|priorit|review|organi|status/, "planning"],
];

/** Onto tasks | meetings | communication | notes | planning | wellbeing (planning when nothing fits). */
export function normaliseCategory(value: unknown): StrategyCategory {
  return pick(value, STRATEGY_CATEGORIES, CATEGORY_SYNONYMS, "planning");
}

const SOURCE_SYNONYMS: [RegExp, MatrixSource][] = [
  [/todo|to-do|task/, "todo"],
  [/calendar|event|meeting|schedule|agenda/, "calendar"],
  [/mail|inbox|message/, "email"],
  [/note|doc/, "note"],
];

/** Onto todo | calendar | email | note | status; the summaries' own names (`todoSummary`…) map too. */
export function normaliseSource(value: unknown): MatrixSource {
  return pick(value, MATRIX_SOURCES, SOURCE_SYNONYMS, "status");
}

/** One line of text within `max` characters, or "" for anything that is not text. */
export function oneLine(value: unknown, max: number): string {
  return typeof value === "string" ? clip(value.replace(/\s+/g, " ").trim(), max) : "";
}

const field = (value: unknown, name: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[name] : undefined;

/**
 * Strategies ranked as given, at most three, numbered 1…3; an entry without a title is dropped;
 * a missing action falls back to the description (clients print `action`, else `description`).
 */
export function normaliseStrategies(raw: unknown): StrategyItem[] {
  if (!Array.isArray(raw)) return [];
  const strategies: StrategyItem[] = [];
  for (const entry of raw) {
    const title = oneLine(field(entry, "title"), TITLE_CHARS);
    if (!title) continue;
    const description = oneLine(field(entry, "description"), DESCRIPTION_CHARS);
    strategies.push({
      priority: strategies.length + 1,
      title,
      description,
      action: oneLine(field(entry, "action"), ACTION_CHARS) || clip(description || title, ACTION_CHARS),
      urgencyLevel: normaliseUrgency(field(entry, "urgencyLevel")),
      category: normaliseCategory(field(entry, "category")),
    });
    if (strategies.length === MAX_STRATEGIES) break;
  }
  return strategies;
}

const QUADRANTS = ["q1_urgent_important", "q2_not_urgent_important", "q3_urgent_not_important", "q4_not_urgent_not_important"] as const;

/** All four quadrants, each a list of `{title, source}` (at most {@link MAX_QUADRANT_ITEMS}); untitled items dropped. */
export function normaliseMatrix(raw: unknown): Matrix {
  const quadrant = (value: unknown): MatrixItem[] =>
    (Array.isArray(value) ? value : [])
      .map((item) => ({ title: oneLine(field(item, "title"), TITLE_CHARS), source: normaliseSource(field(item, "source")) }))
      .filter((item) => item.title)
      .slice(0, MAX_QUADRANT_ITEMS);
  return Object.fromEntries(QUADRANTS.map((name) => [name, quadrant(field(raw, name))])) as Matrix;
}
