import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../src/auth/api-keys";
import { call, ok, storages, userEvents } from "./delegation-fixture";
import { type FakeProvider, type FakeReply, startFakeOpenAI } from "./fakes/fake-openai";
import { WebhookReceiver } from "./fakes/webhook-receiver";
import { startAnotherInstance, startTestServer, type TestServer, type TestUser } from "./harness";

interface Totals {
  tokensIn: number;
  tokensOut: number;
  totalTokens: number;
  modelCalls: number;
  runs: number;
  toolCalls: number;
  credits: number;
  activeDevices: number;
}
interface Usage {
  month: string;
  groupBy: string | null;
  total: Totals;
  groups: (Totals & { key: string; label: string | null })[];
}
interface Budget {
  id: string;
  scope: string;
  scopeId: string | null;
  tokensPerMonth: number | null;
  runsPerDay: number | null;
  activeDevices: number | null;
  spent: { tokensThisMonth: number; runsToday: number; activeDevicesThisMonth: number };
}
interface ChatAnswer {
  response: string;
  incomplete?: boolean;
  reason?: string;
  toolsUsed: string[];
}

/** Every step of the fake model: 100 tokens in, 20 out. */
const STEP = { promptTokens: 100, completionTokens: 20 };
const TEXT: FakeReply = { text: "Done.", usage: STEP };
const TOOL: FakeReply = { toolCalls: [{ name: "list_network", args: {} }], usage: STEP };
const MONTH = new Date().toISOString().slice(0, 7);
const DEVICE_CEILING = 2;

describe.each(storages("metering"))("metering and budgets (%s)", (storage) => {
  let ts: TestServer;
  let fake: FakeProvider;
  let receiver: WebhookReceiver;
  let dir: string;
  let serial = 0;
  const user = (name: string) => ts.addUser(`${name}${++serial}`);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tandem-metering-"));
    const rateCard = path.join(dir, "rates.json");
    await writeFile(
      rateCard,
      JSON.stringify({
        currency: "EUR",
        perSeat: 10,
        perActiveDevice: 2.5,
        perMillionTokens: { default: { input: 1, output: 2 }, "fake-chat-1": { input: 3, output: 15 } },
      }),
    );
    fake = await startFakeOpenAI({ defaultReply: TEXT });
    receiver = await WebhookReceiver.start();
    ts = await startTestServer(
      {
        modelProvider: "openai-compatible",
        modelBaseUrl: fake.baseUrl,
        model: "fake-chat-1",
        agentMaxSteps: 50,
        maxActiveDevices: DEVICE_CEILING,
        rateCardFile: rateCard,
        allowPrivateWebhooks: true,
        webhookPollMs: 25,
        maintenanceIntervalMs: 0,
      },
      storage,
    );
  });
  afterAll(async () => {
    await ts?.stop();
    await fake?.close();
    await receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const usage = (who: TestUser, query = "") => ok<{ usage: Usage }>(ts, who.apiKey, "GET", `/metering/usage${query}`).then((b) => b.usage);
  const putBudgets = (who: TestUser | string, budgets: unknown[]) =>
    call<{ budgets: Budget[]; error?: string; message?: string }>(
      ts,
      typeof who === "string" ? who : who.apiKey,
      "PUT",
      "/metering/budgets",
      {
        budgets,
      },
    );
  const chat = (who: TestUser, message = "hello") =>
    call<ChatAnswer & { error?: string; message?: string }>(ts, who.apiKey, "POST", "/chat", { message, stream: false });

  it("records tokens, runs and tool calls as they happen, by model, source and API key", async () => {
    const alice = await user("alice");
    fake.enqueue(TOOL, TEXT);
    expect((await chat(alice)).status).toBe(200);
    expect((await chat(alice)).status).toBe(200);
    const total = (await usage(alice)).total;
    expect(total).toMatchObject({ tokensIn: 300, tokensOut: 60, totalTokens: 360, modelCalls: 3, runs: 2, toolCalls: 1 });

    const byModel = await usage(alice, `?month=${MONTH}&groupBy=model`);
    expect(byModel.groups).toEqual([
      expect.objectContaining({ key: "openai-compatible|fake-chat-1", label: "fake-chat-1", totalTokens: 360 }),
    ]);
    const bySource = await usage(alice, "?groupBy=source");
    expect(bySource.groups).toEqual([expect.objectContaining({ key: "chat", runs: 2, modelCalls: 3 })]);
    const byKey = await usage(alice, "?groupBy=apiKey");
    expect(byKey.groups).toHaveLength(1);
    expect(byKey.groups[0]).toMatchObject({ totalTokens: 360, runs: 2 });
    // The older report reads the same model_usage rows.
    const old = await ok<{ usage: { total: { totalTokens: number } } }>(ts, alice.apiKey, "GET", "/agent/usage");
    expect(old.usage.total.totalTokens).toBe(360);
    // Another user sees none of it.
    expect((await usage(await user("bob"))).total.totalTokens).toBe(0);
  });

  it("refuses months far away and unknown groupings with a clear 400", async () => {
    const carol = await user("carol");
    for (const query of ["?month=2026-13", "?month=1999-01", "?month=2999-01", "?month=march", "?groupBy=color"]) {
      const answer = await call<{ error: string; message: string }>(ts, carol.apiKey, "GET", `/metering/usage${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.message).toBeTruthy();
    }
    const invoice = await call(ts, carol.apiKey, "GET", "/metering/invoice?month=1970-01");
    expect(invoice.status).toBe(400);
  });

  it("checks budgets: bad values, foreign scopes and limited keys get a clear 4xx", async () => {
    const dave = await user("dave");
    const erin = await user("erin");
    const [erinKey] = await ts.server.context.db.selectFrom("api_keys").select("id").where("user_id", "=", erin.userId).execute();
    const cases: [unknown[], number, string][] = [
      [[{ scope: "account", tokensPerMonth: -1 }], 400, "negative"],
      [[{ scope: "account", tokensPerMonth: 1e15 }], 400, "more than"],
      [[{ scope: "account", runsPerDay: 1.5 }], 400, "whole"],
      [[{ scope: "account", activeDevices: DEVICE_CEILING + 1 }], 400, "ceiling"],
      [[{ scope: "apiKey", tokensPerMonth: 5 }], 400, "scopeId"],
      [[{ scope: "apiKey", scopeId: "x", activeDevices: 1 }], 400, "account scope only"],
      [
        [
          { scope: "account", tokensPerMonth: 5 },
          { scope: "account", runsPerDay: 5 },
        ],
        400,
        "twice",
      ],
      [[{ scope: "apiKey", scopeId: erinKey?.id, tokensPerMonth: 5 }], 404, "not found"],
      // No model run belongs to a device: a device budget would cap nothing, so it is refused.
      [[{ scope: "device", scopeId: "erins-laptop", tokensPerMonth: 5 }], 400, "cap nothing"],
      [[{ scope: "device", scopeId: "erins-laptop", runsPerDay: 5 }], 400, "apiKey"],
      [[{ scope: "planet", tokensPerMonth: 5 }], 400, ""],
    ];
    for (const [budgets, status, words] of cases) {
      const answer = await putBudgets(dave, budgets);
      expect(answer.status, JSON.stringify(budgets)).toBe(status);
      expect(answer.body.message, JSON.stringify(budgets)).toContain(words);
    }
    // A key without every scope (one handed to an app) cannot lift its own cap.
    const limited = await createApiKey(ts.server.context.db, { userId: dave.userId, scopes: ["os.notes:read"], label: "app" });
    const refused = await putBudgets(limited.apiKey, [{ scope: "apiKey", scopeId: limited.keyId, tokensPerMonth: 1e9 }]);
    expect(refused.status).toBe(403);
    // Nothing was stored by any of them.
    expect((await ok<{ budgets: Budget[] }>(ts, dave.apiKey, "GET", "/metering/budgets")).budgets).toEqual([]);

    const set = await putBudgets(dave, [
      { scope: "account", tokensPerMonth: 10_000, activeDevices: 1 },
      { scope: "apiKey", scopeId: limited.keyId, runsPerDay: 3 },
    ]);
    expect(set.status).toBe(200);
    expect(set.body.budgets).toEqual([
      expect.objectContaining({ scope: "account", scopeId: null, tokensPerMonth: 10_000, runsPerDay: null, activeDevices: 1 }),
      expect.objectContaining({ scope: "apiKey", scopeId: limited.keyId, runsPerDay: 3 }),
    ]);
    const listed = await ok<{ budgets: Budget[]; ceilings: Record<string, number | null> }>(ts, dave.apiKey, "GET", "/metering/budgets");
    expect(listed.ceilings).toEqual({ tokensPerMonth: null, runsPerDay: null, activeDevices: DEVICE_CEILING });
    // Replacing keeps a scope's id and drops the scopes left out.
    const replaced = await putBudgets(dave, [{ scope: "account", tokensPerMonth: 20_000 }]);
    expect(replaced.body.budgets).toEqual([expect.objectContaining({ id: set.body.budgets[0]?.id, tokensPerMonth: 20_000 })]);
  });

  it("refuses a run over a budget before the model is called: 402 budget_exceeded naming the budget", async () => {
    const frank = await user("frank");
    expect((await putBudgets(frank, [{ scope: "account", runsPerDay: 1 }])).status).toBe(200);
    const before = fake.requests.length;
    expect((await chat(frank)).status).toBe(200);
    const refused = await chat(frank);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toBe("budget_exceeded");
    expect(refused.body.message).toContain("runsPerDay");
    expect(refused.body.message).toContain("quota");
    expect(fake.requests.length).toBe(before + 1);
    // A refused run is not counted.
    expect((await usage(frank)).total.runs).toBe(1);

    // A tokens budget of an API key: the key is refused, the account's other key is not.
    const other = await createApiKey(ts.server.context.db, {
      userId: frank.userId,
      scopes: (await import("@tandem/core")).ALL_SCOPES,
      label: "other",
    });
    expect((await putBudgets(frank, [{ scope: "apiKey", scopeId: other.keyId, tokensPerMonth: 100 }])).status).toBe(200);
    const viaOther = (message: string) => call<{ error?: string }>(ts, other.apiKey, "POST", "/chat", { message, stream: false });
    expect((await viaOther("one")).status).toBe(200);
    const spent = await viaOther("two");
    expect(spent.status).toBe(402);
    expect(spent.body.error).toBe("budget_exceeded");
    expect((await chat(frank)).status).toBe(200);
  });

  it("meters a managed agent's runs under its id and holds it to its own budget", async () => {
    const lena = await user("lena");
    await ok(ts, lena.apiKey, "POST", "/init", {});
    const handle = `lena-helper-${serial}`;
    const created = await ok<{ agent: { id: number } }>(ts, lena.apiKey, "POST", "/managed-agents", { handle });
    const agentId = String(created.agent.id);
    expect((await putBudgets(lena, [{ scope: "agent", scopeId: agentId, runsPerDay: 1 }])).status).toBe(200);
    const runAgentOnce = () =>
      call<{ error?: string; message?: string }>(ts, lena.apiKey, "POST", `/managed-agents/${agentId}/runs`, {
        input: "hi",
        stream: false,
      });
    expect((await runAgentOnce()).status).toBe(200);
    const refused = await runAgentOnce();
    expect(refused.status).toBe(402);
    expect(refused.body.message).toContain(`agent ${agentId}`);
    // Over A2A too: a rejected task naming the budget, and nothing run.
    const requestsBefore = fake.requests.length;
    const a2a = await ts.fetch(`/a2a/${handle}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${lena.apiKey}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: { message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text: "hi" }] } },
      }),
    });
    expect(a2a.status).toBe(200);
    const task = (await a2a.json()) as { result: { kind: string; status: { state: string; message: unknown }; metadata: unknown } };
    expect(task.result).toMatchObject({ kind: "task", status: { state: "rejected" }, metadata: { error: "budget_exceeded", status: 402 } });
    expect(JSON.stringify(task.result.status.message)).toContain("quota");
    expect(fake.requests.length).toBe(requestsBefore);
    // Only the agent is capped: its owner's own chat goes on.
    expect((await chat(lena)).status).toBe(200);
    const byAgent = await usage(lena, "?groupBy=agent");
    expect(byAgent.groups).toEqual([expect.objectContaining({ key: agentId, runs: 1, modelCalls: 1 })]);
    const bySource = await usage(lena, "?groupBy=source");
    expect(bySource.groups.map((g) => g.key).sort()).toEqual(["chat", "managed_agent"]);
    // Another owner's agent cannot be budgeted.
    const other = await putBudgets(await user("mona"), [{ scope: "agent", scopeId: agentId, runsPerDay: 5 }]);
    expect(other.status).toBe(404);
  });

  it("meters a run resumed after an escalation as the same run; over budget, POST /heartbeat/run is a 402 and leaves no run", async () => {
    const nora = await user("nora");
    await nora.client.call("init");
    await nora.client.call("setHeartbeatPolicy", { body: { tier: "ACTIONS", toolPolicy: { create_todo: "ask" } } });
    expect((await putBudgets(nora, [{ scope: "account", runsPerDay: 1 }])).status).toBe(200);
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: "Call the bank" } }], usage: STEP });
    const { result: run } = await nora.client.call("runHeartbeat", { body: {} });
    expect(run.status).toBe("requires_action");
    expect((await usage(nora)).total).toMatchObject({ runs: 1, modelCalls: 1, totalTokens: 120 });
    const [escalation] = (await ok<{ escalations: { id: string }[] }>(ts, nora.apiKey, "GET", "/escalations?status=pending")).escalations;
    fake.enqueue(TEXT);
    expect((await call(ts, nora.apiKey, "POST", `/escalations/${escalation?.id}/resolve`, { decision: "continue" })).status).toBe(200);
    await expect.poll(async () => (await nora.client.call("getHeartbeatRun", { params: { id: run.runId } })).run.status).toBe("completed");
    // The resumed step's tokens are counted; the run is not counted a second time (its budget of 1 run a day held it).
    const bySource = await usage(nora, "?groupBy=source");
    expect(bySource.total).toMatchObject({ runs: 1, modelCalls: 2, totalTokens: 240, toolCalls: 1 });
    expect(bySource.groups).toEqual([expect.objectContaining({ key: "heartbeat", runs: 1, modelCalls: 2 })]);

    // Over budget now: a manual heartbeat is refused before anything runs, and no failed run is left.
    const runsBefore = (await nora.client.call("listHeartbeatRuns", { query: {} })).runs.length;
    const requestsBefore = fake.requests.length;
    const refused = await call<{ error: string; message: string }>(ts, nora.apiKey, "POST", "/heartbeat/run", {});
    expect(refused.status).toBe(402);
    expect(refused.body.error).toBe("budget_exceeded");
    expect(refused.body.message).toMatch(/runsPerDay.*quota/);
    expect((await nora.client.call("listHeartbeatRuns", { query: {} })).runs).toHaveLength(runsBefore);
    expect(fake.requests.length).toBe(requestsBefore);
    expect((await usage(nora)).total.runs).toBe(1);
  });

  it("stops a run that crosses a budget at the next step boundary, with status budget_exceeded", async () => {
    const gina = await user("gina");
    // 250 tokens: the third step (360 tokens) crosses it; the run would otherwise go on calling tools.
    expect((await putBudgets(gina, [{ scope: "account", tokensPerMonth: 250 }])).status).toBe(200);
    // Three tool steps queued: the third crosses the budget, so no fourth request is made.
    fake.enqueue(TOOL, TOOL, TOOL);
    const before = fake.requests.length;
    const answer = await chat(gina);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ incomplete: true, reason: "budget_exceeded" });
    expect(fake.requests.length - before).toBe(3);
    expect((await usage(gina)).total).toMatchObject({ totalTokens: 360, modelCalls: 3, toolCalls: 3 });
    expect(fake.pending).toBe(0);
  });

  it("announces 80 % and 100 % once per period on the stream and as the budget.threshold webhook", async () => {
    const hank = await user("hank");
    const { path: hookPath, url } = receiver.newPath();
    const created = await call<{ secret: string }>(ts, hank.apiKey, "POST", "/webhooks", { url, events: ["budget.threshold"] });
    expect(created.status).toBe(201);
    receiver.trust(hookPath, created.body.secret);
    // 600 tokens; each chat takes 120: the 4th reaches 80 %, the 5th 100 %, the 6th is refused.
    const budgets = await putBudgets(hank, [{ scope: "account", tokensPerMonth: 600 }]);
    for (let i = 0; i < 5; i++) expect((await chat(hank)).status).toBe(200);
    expect((await chat(hank)).status).toBe(402);
    const events = (await userEvents(ts, hank)).filter((e) => e.type === "budget.threshold");
    expect(events.map((e) => (e.data as { thresholdPercent: number }).thresholdPercent)).toEqual([80, 100]);
    expect(events[0]?.data).toMatchObject({ budgetId: budgets.body.budgets[0]?.id, spent: 480, limit: 600, budget: "tokensPerMonth" });
    const hooks = await receiver.nth(2, (w) => w.path === hookPath);
    expect(hooks.map((w) => w.payload.type)).toEqual(["budget.threshold", "budget.threshold"]);
    expect(hooks.map((w) => w.payload.data.thresholdPercent).sort()).toEqual([100, 80]);
    expect(receiver.rejected).toEqual([]);
  });

  it("counts a device once a month and refuses a device over the account's ceiling", async () => {
    const ivy = await user("ivy");
    const register = (deviceId: string) =>
      call<{ endpoint: { endpointId: string }; deviceToken: string; error?: string; message?: string }>(
        ts,
        ivy.apiKey,
        "POST",
        "/local-agent/endpoints",
        {
          runtime: "claude-code",
          deviceId,
        },
      );
    const first = await register("ivy-laptop");
    expect(first.status).toBe(201);
    await ok(ts, first.body.deviceToken, "POST", `/local-agent/endpoints/${first.body.endpoint.endpointId}/heartbeat`, {});
    expect((await register("ivy-desktop")).status).toBe(201);
    const third = await register("ivy-phone");
    expect(third.status).toBe(402);
    expect(third.body.error).toBe("budget_exceeded");
    expect(third.body.message).toMatch(/device ceiling.*activeDevices.*cannot register/i);
    expect(third.body.message).toContain("quota");
    // A device already active this month registers again.
    expect((await register("ivy-laptop")).status).toBe(200);
    const byDevice = await usage(ivy, "?groupBy=device");
    expect(byDevice.total.activeDevices).toBe(2);
    expect(byDevice.groups.map((g) => g.key).sort()).toEqual(["ivy-desktop", "ivy-laptop"]);
    // The account's own budget can be lower than the operator's ceiling.
    const jack = await user("jack");
    expect((await putBudgets(jack, [{ scope: "account", activeDevices: 0 }])).status).toBe(200);
    const refused = await call<{ message: string }>(ts, jack.apiKey, "POST", "/local-agent/endpoints", {
      runtime: "codex",
      deviceId: "jack-1",
    });
    expect(refused.status).toBe(402);
  });

  it("simulates the month's invoice with the operator's rate card", async () => {
    const kim = await user("kim");
    await chat(kim);
    await chat(kim);
    await call(ts, kim.apiKey, "POST", "/local-agent/endpoints", { runtime: "codex", deviceId: "kim-1" });
    const { invoice } = await ok<{
      invoice: { currency: string; lines: { description: string; quantity: number; amount: number }[]; total: number; simulated: boolean };
    }>(ts, kim.apiKey, "GET", `/metering/invoice?month=${MONTH}`);
    expect(invoice.currency).toBe("EUR");
    expect(invoice.simulated).toBe(true);
    // 200 input tokens at 3 and 40 output at 15 per million round to 0; a device at 2.50; a seat at 10.
    expect(invoice.lines.map((l) => [l.description, l.quantity])).toEqual([
      ["fake-chat-1: input tokens", 0.0002],
      ["fake-chat-1: output tokens", 0.00004],
      ["Active devices", 1],
      ["Seats", 1],
    ]);
    expect(invoice.total).toBe(12.5);

    // On the team, the seats are the team's people, on the owner's invoice (the server's first account).
    const seatLine = async (key: string) =>
      (
        await ok<{ invoice: { lines: { description: string; quantity: number; amount: number; note?: string }[] } }>(
          ts,
          key,
          "GET",
          "/metering/invoice",
        )
      ).invoice.lines.find((l) => l.description === "Seats");
    const owner = await ts.server.context.db.selectFrom("team_members").select("user_id").where("role", "=", "owner").executeTakeFirst();
    const ownerKey = await createApiKey(ts.server.context.db, {
      userId: owner?.user_id ?? 0,
      scopes: (await import("@tandem/core")).ALL_SCOPES,
      label: "owner",
    });
    const before = (await seatLine(ownerKey.apiKey))?.quantity ?? 0;
    const invite = await ok<{ token: string }>(ts, ownerKey.apiKey, "POST", "/os/team/invite", { role: "member" });
    await ok(ts, kim.apiKey, "POST", "/os/team/accept", { token: invite.token });
    expect(await seatLine(ownerKey.apiKey)).toMatchObject({ quantity: before + 1, amount: (before + 1) * 10 });
    expect(await seatLine(kim.apiKey)).toMatchObject({ quantity: 0, amount: 0, note: expect.stringContaining("owner's invoice") });
  });

  it("starts exactly the allowed runs when many race at the edge of runsPerDay", async () => {
    // Of 8 runs at once with 3 allowed, exactly 3 start.
    const day = await user("day");
    expect((await putBudgets(day, [{ scope: "account", runsPerDay: 3 }])).status).toBe(200);
    const dayAnswers = await Promise.all(Array.from({ length: 8 }, () => chat(day)));
    expect(dayAnswers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(dayAnswers.filter((a) => a.status === 402)).toHaveLength(5);
    expect((await usage(day)).total.runs).toBe(3);
  });

  // Last: the tool replies left queued after it would change later tests' runs.
  it("holds a tokens budget under a race (over two instances on PostgreSQL): every run overshoots by at most one step", async () => {
    const race = await user("race");
    const runs = 8;
    // Each run would call tools for 20 steps; the budget is 1000 tokens (about 8 steps over all runs).
    expect((await putBudgets(race, [{ scope: "account", tokensPerMonth: 1000 }])).status).toBe(200);
    fake.enqueue(...Array.from({ length: runs * 20 }, () => TOOL));
    // On PostgreSQL, half the runs go through a second instance on the same database.
    const other = storage === "postgres" ? await startAnotherInstance(ts) : undefined;
    const answers = await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        if (!other || i % 2 === 0) return chat(race, `race ${i}`);
        const response = await fetch(`${other.apiUrl}/chat`, {
          method: "POST",
          headers: { authorization: `Bearer ${race.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ message: `race ${i}`, stream: false }),
        });
        return { status: response.status, body: (await response.json()) as ChatAnswer };
      }),
    );
    await other?.close();
    for (const answer of answers) {
      if (answer.status === 200) expect(answer.body.reason).toBe("budget_exceeded");
      else expect(answer.status).toBe(402);
    }
    const spent = (await usage(race)).total.totalTokens;
    expect(spent).toBeGreaterThanOrEqual(1000);
    const started = answers.filter((a) => a.status === 200).length;
    // Each run that started may finish the one step it was in when the budget was reached.
    expect(spent).toBeLessThan(1000 + started * 120 + 1);
  });
});
