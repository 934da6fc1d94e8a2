import { MATRIX_SOURCES, STRATEGY_CATEGORIES, todayIn, URGENCY_LEVELS } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BriefingUsage, createBriefingService } from "../src/agent/briefing/briefing-service";
import type { BriefingWriter } from "../src/agent/briefing/briefing-writer";
import { SQLITE_ONLY } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

const SUMMARY_FIELDS = ["statusQuoSummary", "todoSummary", "calendarSummary", "notesSummary", "emailAttentionSummary"] as const;
type Summaries = Record<(typeof SUMMARY_FIELDS)[number], string>;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** What a summary may contain: these elements, never an attribute. */
const ALLOWED_TAGS = new Set(["p", "br", "ul", "ol", "li", "strong", "em", "b", "i", "h3", "h4", "code", "time"]);

function shiftDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

const pick = (briefing: Summaries): Summaries => Object.fromEntries(SUMMARY_FIELDS.map((field) => [field, briefing[field]])) as Summaries;

function expectSafeHtml(html: string) {
  for (const [, name, rest] of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g)) {
    expect(ALLOWED_TAGS.has((name as string).toLowerCase()), `<${name}> in ${html}`).toBe(true);
    expect(rest, `attributes in ${html}`).toBe("");
  }
}

describe.each(SQLITE_ONLY)("briefings (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const today = todayIn("UTC");

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    const todo = (title: string, dueDate: string, priority: number | null) =>
      alice.client.call("createTodo", { body: { title, dueDate, priority } });
    await todo("File taxes", shiftDate(today, -2), 3);
    await todo("Pay rent", shiftDate(today, -1), 1);
    await todo("Call the dentist", today, 2);
    await todo("Someday task", shiftDate(today, 3), 1);
    const done = await todo("Already done", shiftDate(today, -1), 1);
    await alice.client.call("completeTodo", { params: { id: done.result.todo.id } });
    await alice.client.call("createNote", {
      body: {
        title: "Quarterly plan",
        content:
          "Hello everyone.\n\nThe quarterly plan moves the billing launch to March, and the launch needs the billing migration first. " +
          "Lunch was good. The billing migration is the plan's riskiest step.",
      },
    });
    // A note that opens with a heading naming it: its line in a briefing is still a sentence of what it says.
    await alice.client.call("createNote", {
      body: { title: "Team kickoff", content: "# Kickoff\n\nWe start on Monday with everyone in the big room." },
    });
  });
  afterAll(() => t.stop());

  const brief = (user: TestUser, body: Record<string, unknown> = {}) => user.client.call("createBriefing", { body });
  const post = (path: string, token: string, body: string | undefined) =>
    t.fetch(`/api/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body });

  it("names the todos due today and overdue, highest priority first, and the notes changed in the window", async () => {
    // Note bodies reach the views a moment after the write.
    await expect
      .poll(async () => (await brief(alice)).notesSummary, { timeout: 10_000 })
      .toMatch(/Quarterly plan[\s\S]*We start on Monday|We start on Monday[\s\S]*Quarterly plan/);
    const briefing = await brief(alice);
    expect(briefing).toMatchObject({ success: true, timeDuration: "last 24 hours", tokenUsage: { total: expect.any(Number) } });
    expect(briefing.briefingId).toBeGreaterThan(0);
    expect(briefing.tokenUsage.total).toBeGreaterThan(0);
    expect(Date.parse(briefing.generatedAt)).not.toBeNaN();
    const todos = briefing.todoSummary;
    expect(todos).toContain("2 overdue and 1 due today");
    const order = ["Pay rent", "Call the dentist", "File taxes"].map((title) => todos.indexOf(title));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(todos).toContain(`overdue since ${shiftDate(today, -1)}`);
    expect(todos).not.toContain("Someday task");
    expect(todos).not.toContain("Already done");
    // The note's extract is its most informative sentence, not its greeting, nor its heading.
    expect(briefing.notesSummary).toContain("billing");
    expect(briefing.notesSummary).not.toContain("Hello everyone");
    expect(briefing.notesSummary).toContain("<strong>Team kickoff</strong> · <time>");
    expect(briefing.notesSummary).toContain("We start on Monday with everyone in the big room.");
    expect(briefing.notesSummary).not.toMatch(/· Kickoff\b/);
    // When a note changed is stored as the instant, never "just now": a briefing is read later.
    const times = [...briefing.notesSummary.matchAll(/<time>([^<]*)<\/time>/g)].map((match) => match[1] as string);
    expect(times.length).toBe(2);
    for (const time of times) expect(new Date(time).toISOString()).toBe(time);
    expect(briefing.notesSummary).not.toMatch(/just now|\bago\b/);
    const [stored] = (await alice.client.call("listBriefings", { query: {} })).briefings;
    expect(stored?.notesSummary).toBe(briefing.notesSummary);
    expect(briefing.statusQuoSummary).toContain("Pay rent");
    expect(briefing.suggestions.length).toBeGreaterThan(0);
    for (const suggestion of briefing.suggestions) {
      expect(suggestion.suggestionId).toMatch(UUID);
      expect(suggestion.title && suggestion.action).toBeTruthy();
    }
    expect(briefing.suggestions[0]).toMatchObject({ title: "Clear overdue todos" });
  });

  it("reads 'today' in the user's time zone", async () => {
    // 14 hours ahead of UTC most of the day: its today is UTC's tomorrow until 10:00 UTC.
    const ahead = todayIn("Pacific/Kiritimati");
    await bob.client.call("createTodo", { body: { title: "Island errand", dueDate: ahead } });
    const there = await brief(bob, { userTimezone: "Pacific/Kiritimati" });
    expect(there.todoSummary).toContain("Island errand");
    expect(there.todoSummary).toContain("due today");
    const elsewhere = await brief(bob, { userTimezone: "Pacific/Pago_Pago" });
    // 25 hours behind Kiritimati, the same todo is not due yet.
    expect(elsewhere.todoSummary).not.toContain("Island errand");
  });

  it("lists the given calendar events in time order in the user's zone, and emails needing a reply first", async () => {
    const start = `${today}T23:00:00.000Z`;
    const briefing = await brief(alice, {
      userTimezone: "Asia/Tokyo",
      calendarEvents: [
        { summary: "Late review", start, end: `${shiftDate(today, 1)}T00:00:00.000Z`, location: "Room 2" },
        { summary: "Early standup", start: `${today}T00:00:00.000Z`, end: `${today}T00:15:00.000Z` },
        { summary: "Offsite", start: shiftDate(today, 2), end: shiftDate(today, 3) },
      ],
      emails: [
        { sender: "news@shop.example", summary: "Weekly deals", priority: "low" },
        { sender: "Carol", summary: "Budget sign-off", needsReply: true, priority: "high", date: `${today}T08:00:00Z` },
        { sender: "Dan", summary: "Lunch on Friday?", needsReply: true },
      ],
    });
    const calendar = briefing.calendarSummary;
    expect(calendar).toContain("3 events");
    expect(calendar.indexOf("Early standup")).toBeLessThan(calendar.indexOf("Late review"));
    expect(calendar.indexOf("Late review")).toBeLessThan(calendar.indexOf("Offsite"));
    // 00:00 UTC is 09:00 in Tokyo; 23:00 UTC is 08:00 the next Tokyo day.
    expect(calendar).toContain("09:00–09:15");
    expect(calendar).toContain("08:00–09:00");
    expect(calendar).toContain("Room 2");
    expect(calendar).toContain("all day");
    const email = briefing.emailAttentionSummary;
    expect(email).toContain("3 emails, 2 need a reply");
    expect(email.indexOf("Budget sign-off")).toBeLessThan(email.indexOf("Lunch on Friday?"));
    expect(email.indexOf("Lunch on Friday?")).toBeLessThan(email.indexOf("Weekly deals"));
    expect(email).toContain("needs reply");
    expect(briefing.statusQuoSummary).toContain("2 of 3 emails waiting for a reply");
    expect(briefing.suggestions.map((s) => s.title)).toContain("Answer waiting emails");
  });

  it("escapes every piece of user text: no element or attribute from notes, todos, emails or events gets through", async () => {
    const mallory = await t.addUser(`mallory_${storage}`);
    await mallory.client.call("createTodo", { body: { title: `<b onmouseover="alert(1)">bold</b>`, dueDate: today } });
    await mallory.client.call("createNote", {
      body: {
        title: "<script>alert('title')</script>",
        content: "<img src=x onerror=alert(1)> A note. <svg onload=alert(2)></svg>",
        format: "text",
      },
    });
    const body = {
      calendarEvents: [
        {
          summary: `<iframe src="javascript:alert(3)"></iframe>`,
          start: `${today}T10:00:00Z`,
          end: `${today}T11:00:00Z`,
          location: `"><script>x()</script>`,
        },
      ],
      emails: [
        { sender: `"><svg onload=alert(4)>`, summary: "<script>alert(5)</script>", category: "<style>*{}</style>", needsReply: true },
      ],
    };
    await expect.poll(async () => (await brief(mallory, body)).notesSummary, { timeout: 10_000 }).toContain("&lt;script&gt;");
    const briefing = await brief(mallory, body);
    for (const field of SUMMARY_FIELDS) expectSafeHtml(briefing[field]);
    expect(briefing.todoSummary).toContain("&lt;b onmouseover=&quot;alert(1)&quot;&gt;bold&lt;/b&gt;");
    expect(briefing.notesSummary).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(briefing.calendarSummary).toContain("&lt;iframe");
    expect(briefing.emailAttentionSummary).toContain("&lt;script&gt;alert(5)&lt;/script&gt;");
    // The history answers the same escaped text.
    const { briefings } = await mallory.client.call("listBriefings", { query: { limit: 1 } });
    for (const field of SUMMARY_FIELDS) expect(briefings[0]?.[field]).toBe(briefing[field]);
  });

  it("accepts window phrases and refuses unknown ones, bad time zones and bad items with a 400", async () => {
    for (const timeDuration of ["last 7 days", "today", "this week", "past 3 hours", "last week", "24h", "this month", "Last 2 Weeks"]) {
      expect((await brief(alice, { timeDuration })).timeDuration).toBe(timeDuration);
    }
    expect((await brief(alice, { timeDuration: "yesterday" })).notesSummary).toContain("No notes changed yesterday");
    const refused = async (body: unknown) => {
      const response = await post("/briefing", alice.apiKey, JSON.stringify(body));
      expect(response.status, JSON.stringify(body)).toBe(400);
      return (await response.json()) as { error: string; message: string };
    };
    expect(await refused({ timeDuration: "since the dawn of time" })).toMatchObject({ error: "invalid_time_duration" });
    expect((await refused({ timeDuration: "last 1000 days" })).message).toContain("366 days");
    expect((await refused({ timeDuration: "days" })).message).toContain("last N days");
    expect((await refused({ userTimezone: "Mars/Olympus_Mons" })).message).toContain("body.userTimezone");
    expect((await refused({ emails: "many" })).error).toBe("invalid_request");
    expect((await refused({ calendarEvents: [{ summary: "no times" }] })).message).toContain("start");
    expect((await refused({ calendarEvents: [{ start: "someday", end: "later" }] })).message).toContain("ISO 8601");
    expect((await post("/briefing", alice.apiKey, "{not json")).status).toBe(400);
    // No body at all is an empty one.
    expect((await post("/briefing", alice.apiKey, undefined)).status).toBe(200);
  });

  it("keeps a history, newest first, limited, and each user's own", async () => {
    const made = [];
    for (const timeDuration of ["last 2 hours", "last 3 hours", "last 4 hours"]) made.push(await brief(bob, { timeDuration }));
    const { briefings } = await bob.client.call("listBriefings", { query: { limit: 3 } });
    expect(briefings.map((b) => b.id)).toEqual(made.map((b) => b.briefingId).reverse());
    expect(briefings.map((b) => b.timeDuration)).toEqual(["last 4 hours", "last 3 hours", "last 2 hours"]);
    const newest = briefings[0];
    const last = made[2];
    expect(newest).toMatchObject({
      ...pick(last as Summaries),
      suggestions: last?.suggestions,
      tokenUsage: last?.tokenUsage,
      generatedAt: last?.generatedAt,
    });
    expect((await bob.client.call("listBriefings", { query: { limit: 2 } })).briefings).toHaveLength(2);
    const all = (await bob.client.call("listBriefings")).briefings;
    expect(all.length).toBeLessThanOrEqual(10);
    const times = all.map((b) => b.generatedAt);
    expect(times).toEqual([...times].sort().reverse());
    // Nobody sees another user's briefings.
    const aliceIds = new Set((await alice.client.call("listBriefings", { query: { limit: 50 } })).briefings.map((b) => b.id));
    for (const b of all) expect(aliceIds.has(b.id)).toBe(false);
    const carol = await t.addUser(`carol_${storage}`);
    expect((await carol.client.call("listBriefings")).briefings).toEqual([]);
    for (const limit of ["0", "51", "ten", "-1"]) {
      const response = await t.fetch(`/api/v1/briefings?limit=${limit}`, { headers: { authorization: `Bearer ${bob.apiKey}` } });
      expect(response.status, limit).toBe(400);
    }
  });

  it("derives the top three strategies with an action and normalised values, the most pressing first", async () => {
    const summaries = pick(await brief(alice));
    const { strategies, generatedAt } = await alice.client.call("briefingStrategies", { body: summaries });
    expect(Date.parse(generatedAt)).not.toBeNaN();
    expect(strategies).toHaveLength(3);
    expect(strategies.map((s) => s.priority)).toEqual([1, 2, 3]);
    for (const strategy of strategies) {
      expect(URGENCY_LEVELS).toContain(strategy.urgencyLevel);
      expect(STRATEGY_CATEGORIES).toContain(strategy.category);
      expect(strategy.action.length).toBeGreaterThan(10);
      expect(strategy.action).not.toContain("\n");
    }
    expect(strategies[0]).toMatchObject({ title: "Catch up on “Pay rent”", category: "tasks" });
    expect(["critical", "high"]).toContain(strategies[0]?.urgencyLevel);
    expect(strategies[0]?.description).toContain("overdue");
  });

  it("reads any client's HTML: urgent and important items first, low-priority mail last, values normalised", async () => {
    const body = {
      todoSummary: "<ul><li>Sign the client contract - URGENT, due today</li><li>Water the plants</li></ul>",
      emailAttentionSummary:
        "<ol><li>Newsletter from the shop (low priority)</li><li>Board asks for the budget &amp; needs a reply ASAP</li></ol>",
      calendarSummary: "<p>Dentist appointment tomorrow at 10. Team offsite next month.</p>",
      notesSummary: "<p>Project goals draft</p><script>alert('never')</script>",
      statusQuoSummary: null,
    };
    const { strategies } = await alice.client.call("briefingStrategies", { body });
    expect(strategies[0]?.title).toBe("Finish “Sign the client contract”");
    expect(strategies[0]?.urgencyLevel).toBe("critical");
    expect(strategies[1]?.category).toBe("communication");
    expect(strategies[1]?.title).toContain("Board asks for the budget & needs a reply ASAP");
    const { matrix } = await alice.client.call("briefingMatrix", { body });
    expect(Object.keys(matrix).sort()).toEqual([
      "q1_urgent_important",
      "q2_not_urgent_important",
      "q3_urgent_not_important",
      "q4_not_urgent_not_important",
    ]);
    const titles = (quadrant: keyof typeof matrix) => matrix[quadrant].map((item) => item.title);
    expect(titles("q1_urgent_important")).toContain("Sign the client contract");
    expect(titles("q1_urgent_important")).toContain("Board asks for the budget & needs a reply ASAP");
    expect(titles("q2_not_urgent_important")).toEqual(expect.arrayContaining(["Water the plants", "Project goals draft"]));
    expect(titles("q4_not_urgent_not_important")).toContain("Newsletter from the shop (low priority)");
    const all = Object.values(matrix).flat();
    expect(all.some((item) => item.title.includes("alert"))).toBe(false);
    for (const item of all) expect(MATRIX_SOURCES).toContain(item.source);
    expect(matrix.q1_urgent_important.find((item) => item.title.startsWith("Sign"))?.source).toBe("todo");
    expect(matrix.q1_urgent_important.find((item) => item.title.startsWith("Board"))?.source).toBe("email");
  });

  it("builds the matrix of a briefing: overdue todos urgent and important", async () => {
    const { matrix } = await alice.client.call("briefingMatrix", { body: pick(await brief(alice)) });
    expect(matrix.q1_urgent_important).toEqual(expect.arrayContaining([{ title: "Pay rent", source: "todo" }]));
  });

  it("answers empty strategies and an empty matrix for missing, null or empty summaries", async () => {
    const nulls = Object.fromEntries(SUMMARY_FIELDS.map((field) => [field, null]));
    const empties = Object.fromEntries(SUMMARY_FIELDS.map((field) => [field, ""]));
    const blank = Object.fromEntries(SUMMARY_FIELDS.map((field) => [field, "<p> </p><ul></ul>"]));
    const emptyMatrix = {
      q1_urgent_important: [],
      q2_not_urgent_important: [],
      q3_urgent_not_important: [],
      q4_not_urgent_not_important: [],
    };
    for (const body of [undefined, "{}", JSON.stringify(nulls), JSON.stringify(empties), JSON.stringify(blank)]) {
      const strategies = await post("/briefing/strategies", alice.apiKey, body);
      expect(strategies.status).toBe(200);
      expect(await strategies.json()).toMatchObject({ success: true, strategies: [] });
      const matrix = await post("/briefing/matrix", alice.apiKey, body);
      expect(matrix.status).toBe(200);
      expect(await matrix.json()).toMatchObject({ success: true, matrix: emptyMatrix });
    }
  });

  it("answers bad bodies with 400 (or 413 past the body limit), never 500", async () => {
    for (const path of ["/briefing/strategies", "/briefing/matrix"]) {
      const wrongType = await post(path, alice.apiKey, JSON.stringify({ todoSummary: 42 }));
      expect(wrongType.status).toBe(400);
      expect(((await wrongType.json()) as { message: string }).message).toContain("body.todoSummary");
      const tooLong = await post(path, alice.apiKey, JSON.stringify({ notesSummary: `<p>${"a".repeat(100 * 1024)}</p>` }));
      expect(tooLong.status).toBe(400);
      expect(((await tooLong.json()) as { message: string }).message).toContain("at most 100 KB");
      const huge = await post(path, alice.apiKey, JSON.stringify({ notesSummary: "\\".repeat(1_200_000) }));
      expect(huge.status).toBe(413);
      expect((await post(path, alice.apiKey, "[1,2]")).status).toBe(400);
      expect((await post(path, alice.apiKey, "nope")).status).toBe(400);
      // At the limit, a summary of many items is read in bounded time.
      const many = `<ul>${"<li>Urgent: call today</li>".repeat(3500)}</ul>`.slice(0, 100 * 1024);
      expect((await post(path, alice.apiKey, JSON.stringify({ todoSummary: many }))).status).toBe(200);
    }
  });

  it("answers the same strategies and matrix for the same summaries", async () => {
    const summaries = pick(await brief(alice));
    const first = await alice.client.call("briefingStrategies", { body: summaries });
    const second = await alice.client.call("briefingStrategies", { body: summaries });
    expect(second.strategies).toEqual(first.strategies);
    const matrixA = await alice.client.call("briefingMatrix", { body: summaries });
    const matrixB = await alice.client.call("briefingMatrix", { body: summaries });
    expect(matrixB.matrix).toEqual(matrixA.matrix);
  });

  it("saves a brief as a note titled 'Daily Brief YYYY-MM-DD' tagged daily-brief", async () => {
    const briefing = await brief(alice);
    const title = `Daily Brief ${today}`;
    const created = await alice.client.raw("createNote", {
      body: { title, content: `## Status\n\n${briefing.statusQuoSummary}\n\n## Todos\n\n${briefing.todoSummary}`, tags: ["daily-brief"] },
    });
    expect(created.status).toBe(201);
    const { note } = (created.body as { result: { note: { id: number; title: string } } }).result;
    expect(note.title).toBe(title);
    const { note: full } = await alice.client.call("getNote", { params: { id: note.id } });
    expect(full.tags).toEqual(["daily-brief"]);
    expect(full.markdown).toContain("Pay rent");
  });

  it("reports each briefing's tokens under the calling key and survives a failing or hostile model writer", async () => {
    const { db } = t.server.context;
    const reported: BriefingUsage[] = [];
    const onUsage = async (usage: BriefingUsage) => {
      reported.push(usage);
    };
    const principal = {
      userId: alice.userId,
      username: alice.username,
      credential: { kind: "api_key", id: "key_test", label: null, scopes: new Set() },
    } as const;
    const request = { timeDuration: "last 24 hours", userTimezone: "UTC" };
    const local = await createBriefingService({ db, onUsage }).create(principal as never, request);
    expect(reported).toEqual([
      expect.objectContaining({ userId: alice.userId, apiKeyId: "key_test", purpose: "briefing", provider: "local" }),
    ]);
    expect((reported[0]?.promptTokens ?? 0) + (reported[0]?.completionTokens ?? 0)).toBe(local.tokenUsage.total);

    // A model writer (the provider edge, faked): its HTML is sanitised and its usage reported as it says.
    const hostile: BriefingWriter = {
      write: async () => ({
        sections: {
          statusQuoSummary: `<p onclick="x()">Fine <script>steal()</script><a href="javascript:alert(1)">link</a></p>`,
          todoSummary: "<ul><li>One &amp; two</li></ul>",
          calendarSummary: "<img src=x onerror=alert(1)>",
          notesSummary: "<script/>alert(1)</script><SCRIPT >x()</SCRIPT >ok",
          emailAttentionSummary: "<style>body{}</style>Plain",
          suggestions: [
            { title: "Do it\nnow", description: "d", action: "a" },
            { title: "", description: "", action: "" },
          ],
        },
        usage: { provider: "openai-compatible", model: "fake-model", promptTokens: 120, completionTokens: 30 },
      }),
    };
    const written = await createBriefingService({ db, writer: hostile, onUsage }).create(principal as never, request);
    expect(written.statusQuoSummary).toBe("<p>Fine link</p>");
    expect(written.todoSummary).toBe("<ul><li>One &amp; two</li></ul>");
    expect(written.calendarSummary).toBe("");
    expect(written.notesSummary).toBe("ok");
    expect(written.emailAttentionSummary).toBe("Plain");
    expect(written.suggestions).toEqual([{ suggestionId: expect.stringMatching(UUID), title: "Do it now", description: "d", action: "a" }]);
    expect(written.tokenUsage.total).toBe(150);
    expect(reported[1]).toMatchObject({ provider: "openai-compatible", model: "fake-model", promptTokens: 120, completionTokens: 30 });

    const failing: BriefingWriter = { write: () => Promise.reject(new Error("provider down")) };
    const fallback = await createBriefingService({ db, writer: failing, onUsage }).create(principal as never, request);
    expect(fallback.todoSummary).toContain("Pay rent");
    expect(reported[2]).toMatchObject({ provider: "local" });
  });
});

describe("GET /notes/summary", () => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("summarises each note by its most informative sentences, not its first characters", async () => {
    await alice.client.call("createNote", {
      body: {
        title: "Database migration",
        content:
          "Hi all, a quick update from me today.\n\n" +
          "The weather was grey.\n\n" +
          "The database migration to PostgreSQL starts Friday, after the database backups finish. " +
          "Coffee is in the kitchen. " +
          "Every service reads the new database once the migration is verified.",
      },
    });
    const summary = async () => (await alice.client.call("notesSummary", { query: { limit: 5 } })).notes[0]?.summary ?? "";
    await expect.poll(summary, { timeout: 10_000 }).toContain("database migration to PostgreSQL starts Friday");
    const text = await summary();
    expect(text).toContain("Every service reads the new database");
    expect(text).not.toContain("Hi all");
    expect(text).not.toContain("Coffee");
    const { notesSummary } = await alice.client.call("notesSummary", { query: { limit: 5 } });
    expect(notesSummary).toContain("<strong>Database migration</strong>");
    expect(notesSummary).toContain("database migration to PostgreSQL");
  });
});
