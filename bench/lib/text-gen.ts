/**
 * Deterministic, realistic-looking note content for benchmarks: a seeded PRNG, a word list drawn
 * with Zipf-like frequencies (a few words are everywhere, most are uncommon, as in real prose),
 * and generators for titles and Markdown bodies with headings, paragraphs and lists. The same
 * seed always gives the same workspace, so runs are comparable.
 */

/** mulberry32: a small, fast, seedable PRNG; good enough for test data, never for secrets. */
export class Prng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }
}

/**
 * About 600 words of everyday work and life vocabulary, most frequent first: the draw below
 * favours the front of the list (Zipf), so "the" is everywhere and "glacier" is rare.
 */
const WORDS = `
the of and to a in is for that on with as it be this are we at by from or will our not have an
was can all but they their more about which one should next team new time work data need also
plan project meeting review notes week update design user customer issue release feature support
test build change process report goal idea question decision action status draft version budget
month quarter today tomorrow morning afternoon call email document list item task owner deadline
priority risk problem solution option approach result feedback summary detail context example
research analysis strategy market product service system server client model code api database
query index search cache memory performance latency throughput scale cost price revenue growth
sales marketing partner contract legal policy security privacy access account login password
token key backup restore migration deploy pipeline staging production incident outage alert
monitoring logging metric dashboard chart table spreadsheet slide presentation workshop training
onboarding hiring interview candidate role manager engineer designer writer editor reader author
book article chapter paper blog post podcast video recording transcript quote reference link
source citation library archive folder file page section paragraph sentence word letter note
travel flight hotel train ticket booking trip vacation holiday weekend evening dinner lunch
breakfast coffee tea recipe kitchen garden plant flower tree forest river lake mountain ocean
beach island city village street house apartment room office desk chair window door light
weather rain snow wind sun cloud storm spring summer autumn winter season year decade history
family friend parent child brother sister neighbour colleague community group club society
health doctor appointment exercise running walking cycling swimming yoga sleep diet energy
music song album concert guitar piano painting drawing photo camera film movie theatre museum
school class lesson course exam homework student teacher university lecture seminar thesis
money bank payment invoice receipt tax insurance loan saving expense income salary bonus
shopping grocery store order delivery package shipping return refund warranty repair tool
car bike bus station airport parking fuel battery charger phone laptop screen keyboard mouse
network wifi router cable printer scanner storage disk cloud sync device app browser extension
language grammar vocabulary translation french spanish german japanese chinese italian dutch
science physics chemistry biology mathematics statistics probability experiment hypothesis
theory evidence observation measurement sample survey interview study finding conclusion
architecture component module interface contract schema migration refactor cleanup debt
estimate scope milestone roadmap backlog sprint retrospective standup demo launch rollout
experiment prototype mockup wireframe sketch concept vision mission value principle culture
conflict agreement negotiation proposal offer approval signature review comment suggestion
improvement fix bug regression crash error warning exception timeout retry fallback default
config setting option flag environment variable secret credential certificate domain proxy
ocean glacier desert canyon volcano meadow orchard harbor lighthouse bridge tunnel castle
cathedral market bakery library gallery stadium theatre cinema festival parade carnival
pepper garlic onion tomato potato carrot lemon orange apple banana cherry grape melon olive
violet crimson amber indigo silver golden copper marble granite velvet cotton linen wool silk
quietly quickly carefully slowly gently roughly nearly mostly rarely often usually sometimes
bright dark heavy light fresh stale simple complex early late urgent minor major critical
clear vague strong weak shared private public internal external local remote manual automatic
`
  .trim()
  .split(/\s+/);

/** Precomputed cumulative Zipf weights (exponent 0.9), so each draw is a binary search. */
const CUMULATIVE: number[] = (() => {
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= WORDS.length; rank++) {
    total += 1 / rank ** 0.9;
    cumulative.push(total);
  }
  return cumulative.map((value) => value / total);
})();

export function word(rng: Prng): string {
  const x = rng.next();
  let lo = 0;
  let hi = CUMULATIVE.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((CUMULATIVE[mid] ?? 1) < x) lo = mid + 1;
    else hi = mid;
  }
  return WORDS[lo] ?? "the";
}

/** A word from the uncommon part of the list, so titles read like topics rather than "the of and". */
function topicWord(rng: Prng): string {
  return WORDS[rng.int(40, WORDS.length - 1)] ?? "topic";
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const TITLE_PREFIXES = ["Meeting notes:", "Ideas for", "Draft:", "TODO", "Re:", "Notes on", "Plan:", "Review of", "Weekly", "Q3"];

export function title(rng: Prng, index: number): string {
  const words = Array.from({ length: rng.int(2, 6) }, () => topicWord(rng));
  let text = words.map((w, i) => (i === 0 || rng.chance(0.4) ? capitalize(w) : w)).join(" ");
  if (rng.chance(0.3)) text = `${rng.pick(TITLE_PREFIXES)} ${text}`;
  if (rng.chance(0.15)) text = `${text} (${2023 + rng.int(0, 2)}-${String(rng.int(1, 12)).padStart(2, "0")})`;
  // A few duplicated titles happen in real workspaces; the index keeps most of them distinct.
  if (rng.chance(0.1)) text = `${text} #${index}`;
  return text;
}

function sentence(rng: Prng, words: number, rareWord: string | undefined): string {
  const list = Array.from({ length: words }, () => word(rng));
  if (rareWord !== undefined) list[rng.int(0, list.length - 1)] = rareWord;
  let text = capitalize(list.join(" "));
  if (rng.chance(0.15)) text = text.replace(/ (\S+) /, " **$1** ");
  else if (rng.chance(0.1)) text = text.replace(/ (\S+) /, " _$1_ ");
  return `${text}${rng.pick([".", ".", ".", ".", "?", "!"])}`;
}

export interface GeneratedBody {
  markdown: string;
  /** Words written (Markdown syntax excluded), to check the 50–400 spread. */
  words: number;
}

/**
 * A Markdown body of `targetWords` words (±a sentence): paragraphs, sometimes a heading, a bullet
 * or task list. `rareWord`, when given, is placed once or twice so search and grep have hits.
 */
export function body(rng: Prng, targetWords: number, rareWord?: string): GeneratedBody {
  const blocks: string[] = [];
  let words = 0;
  let rareLeft = rareWord === undefined ? 0 : rng.int(1, 2);
  const takeRare = () => {
    if (rareLeft > 0 && rng.chance(0.3)) {
      rareLeft--;
      return rareWord;
    }
    return undefined;
  };
  while (words < targetWords) {
    const kind = rng.next();
    if (kind < 0.1 && blocks.length > 0) {
      const n = rng.int(2, 4);
      blocks.push(`## ${capitalize(Array.from({ length: n }, () => topicWord(rng)).join(" "))}`);
      words += n;
    } else if (kind < 0.22) {
      const task = rng.chance(0.3);
      const items: string[] = [];
      for (let i = rng.int(2, 5); i > 0; i--) {
        const n = rng.int(3, 9);
        items.push(`${task ? (rng.chance(0.5) ? "- [x] " : "- [ ] ") : "- "}${sentence(rng, n, takeRare())}`);
        words += n;
      }
      blocks.push(items.join("\n"));
    } else {
      const sentences: string[] = [];
      for (let i = rng.int(1, 5); i > 0 && words < targetWords; i--) {
        const n = rng.int(5, 18);
        sentences.push(sentence(rng, n, takeRare()));
        words += n;
      }
      blocks.push(sentences.join(" "));
    }
  }
  // Whatever the random placement skipped goes in a last paragraph, so every marked note has a hit.
  if (rareLeft > 0 && rareWord !== undefined) {
    blocks.push(sentence(rng, 6, rareWord));
    words += 6;
  }
  return { markdown: blocks.join("\n\n"), words };
}
