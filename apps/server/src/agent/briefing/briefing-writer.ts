/**
 * What a briefing is written from, and what writes it. The service gathers the facts; a writer
 * turns them into the five HTML sections and suggestions: the deterministic writer by rules, a
 * model-backed writer (wired by the agent layer when a remote provider is configured) by prompt.
 * Either way the service sanitises the HTML it gets back before anyone sees it.
 */

export interface TodoFact {
  title: string;
  /** YYYY-MM-DD */
  dueDate: string;
  /** 1 (highest) … 4, or null. */
  priority: number | null;
  overdue: boolean;
}

export interface NoteFact {
  id: number;
  title: string;
  /**
   * When it changed (ISO). A briefing is kept and read later, so it stores this instant (as
   * `<time>ISO</time>`), never "2 hours ago": readers say it relative to when they show it.
   */
  updatedAt: string;
  /** The note's most informative sentence. */
  extract: string;
}

export interface EventFact {
  title: string;
  /** The event's times in the user's time zone, such as "today 09:00–09:30" or "Wed 26 Nov, all day". */
  when: string;
  /** ISO start, for ordering. */
  start: string;
  location: string | null;
  /** One line of its description, or null. */
  detail: string | null;
  /** Whether it has not ended yet. */
  upcoming: boolean;
}

export interface EmailFact {
  sender: string;
  /** Its summary, else its snippet. */
  text: string;
  priority: "high" | "normal" | "low";
  needsReply: boolean;
  category: string | null;
}

/** Everything a briefing says, gathered from the workspace and the request. Untrusted text stays plain text here. */
export interface BriefingFacts {
  /** The window's phrase, as the caller gave it. */
  timeDuration: string;
  /** "in the last 24 hours", "today"… */
  windowDescription: string;
  timeZone: string;
  /** YYYY-MM-DD in the user's time zone. */
  today: string;
  /** Open todos due today or before, most important first. */
  todos: { items: TodoFact[]; overdue: number; dueToday: number };
  /** Notes changed within the window, most recent first; `total` counts those left out too. */
  notes: { items: NoteFact[]; total: number };
  /** The given events in time order. */
  events: EventFact[];
  /** The given emails, those needing a reply and high priority first. */
  emails: EmailFact[];
}

export interface BriefingSuggestion {
  title: string;
  description: string;
  action: string;
}

export interface BriefingSections {
  statusQuoSummary: string;
  todoSummary: string;
  calendarSummary: string;
  notesSummary: string;
  emailAttentionSummary: string;
  suggestions: BriefingSuggestion[];
}

/** Tokens a writer spent, and on what; the deterministic writer estimates them (about four characters a token). */
export interface WriterUsage {
  provider: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
}

export interface BriefingWriter {
  /** `signal` aborts when the client has gone: a model writer then stops its call. */
  write(facts: BriefingFacts, signal?: AbortSignal): Promise<{ sections: BriefingSections; usage: WriterUsage }>;
}
