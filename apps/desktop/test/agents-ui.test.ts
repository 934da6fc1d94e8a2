import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGN_IN_SCOPES } from "../../server/src/delegation/runtime/pairing-service";
import { AGENT_GONE, AGENTS_NOT_ALLOWED, createManagedAgentMethods } from "../src/host/agents/managed-agents";
import type { SessionService } from "../src/host/host-context";
import { serverClient } from "../src/host/session/server-client";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, openSection, screenshot, signInOnPage } from "./browser-harness";

/**
 * The Agents section end to end, in Chromium (web mode): the real server with its local model, the
 * real host. Create an agent (handle, instructions, model, folders, todos, a tool policy), its key
 * shown once, Try it with the tools it called, its runs, more keys and revoking one, pause and
 * resume, the server's refusals in words, and delete.
 */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };
const HOSTILE = `<img src=x onerror="window.__agentPwned=1">`;

describe.skipIf(chromiumMissing("agents"))("the Agents section, end to end", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];
  let agentId = 0;
  let firstKey = "";

  const view = () => page.locator(".agents-view");
  const notice = () => page.locator(".agents-outcome");
  const detail = () => page.getByRole("region", { name: "Agent release-desk" });
  const createForm = () => page.getByRole("form", { name: "Create an agent" });
  const keyShown = () => page.getByRole("region", { name: "New API key" }).getByLabel("Key").inputValue();
  const asAgent = (key: string) => serverClient(app.ts.server.url, key);

  beforeAll(async () => {
    app = await startBrowserApp({ name: "agents-ui", server: { maintenanceIntervalMs: 0 } });
    user = await app.ts.addUser("ada");
    await user.client.call("init", { body: {} });
    await user.client.call("createFolder", { body: { name: "Releases" } });
    await user.client.call("createTodo", { body: { title: "Ship the alpha" } });
    ({ page, pageErrors } = await app.openPage({
      viewport: { width: 1280, height: 1300 },
      locale: "en-US",
      permissions: ["clipboard-read", "clipboard-write"],
    }));
  });

  afterAll(async () => {
    await app?.close();
  });

  it("creates an agent with its grant and tool policy; its key is shown once, copied, and is the agent's", async () => {
    await signInOnPage(page, user.apiKey, app.ts.server.url);
    await openSection(page, "Agents");
    await expect.poll(() => view().textContent(), PATIENCE).toContain("No agent yet.");

    // A handle that breaks the pattern is said before anything goes out; a username is refused by the server, in words.
    await createForm().getByLabel("Handle").fill("x");
    await createForm().getByRole("button", { name: "Create agent" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toContain("The handle must be 2 to 32 lowercase letters");
    await createForm().getByLabel("Handle").fill("ada");
    await createForm().getByRole("button", { name: "Create agent" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("That handle is taken (by a person or another agent); pick another.");

    await createForm().getByLabel("Handle").fill("release-desk");
    await createForm().getByLabel("Name").fill("Release desk");
    await createForm().getByLabel("Instructions").fill("Answer from the Releases folder only. Be brief.");
    await createForm().getByLabel("Model").selectOption("fast");
    await createForm().getByLabel("Notes access").selectOption("folders");
    await createForm().getByRole("checkbox", { name: "Releases" }).check();
    await createForm().getByRole("checkbox", { name: "Create todos" }).check();
    await createForm().getByLabel("Policy for create_todo").selectOption("ask");
    await createForm().getByLabel("Policy for create_note").selectOption("deny");
    await createForm().getByRole("button", { name: "Create agent" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Created @release-desk. Copy its API key now: it is not shown again.");

    firstKey = await keyShown();
    expect(firstKey).toMatch(/^svc_sk_/);
    await page.getByRole("button", { name: "Copy key" }).click();
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Key copied." }).count(), PATIENCE).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(firstKey);
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.getByRole("region", { name: "New API key" }).count()).toBe(0);

    const { agents } = await user.client.call("listManagedAgents");
    const folder = (await user.client.call("listFolders", { query: {} })).folders.find((one) => one.name === "Releases");
    expect(agents).toHaveLength(1);
    expect(agents[0]).toMatchObject({
      handle: "release-desk",
      name: "Release desk",
      instructions: "Answer from the Releases folder only. Be brief.",
      model: "fast",
      namespaces: ["notes", "todos"],
      grant: { notesAccess: { scope: "folders", folderIds: [folder?.id], access: "read" }, todoAccess: { read: true, create: true } },
      toolPolicy: { create_todo: "ask", create_note: "deny" },
      status: "active",
    });
    agentId = agents[0]?.id ?? 0;
    expect(JSON.stringify(agents)).not.toContain(firstKey.slice(-12));
    // The key is the agent: its grant's todos, never its owner's account routes.
    expect((await asAgent(firstKey).call("listTodos", { query: {} })).result.todos.map((todo) => todo.title)).toEqual(["Ship the alpha"]);
    await expect(asAgent(firstKey).call("createManagedAgent", { body: { handle: "sneaky" } })).rejects.toMatchObject({ status: 403 });

    await expect.poll(() => detail().textContent(), PATIENCE).toContain("Ask me: create_todo · Deny: create_note");
    expect(await detail().textContent()).toContain("Notes: Releases (read) · Todos: read, create");
    // The refused creations reached the host, which answered them with an error: the browser logs those as 500s.
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });

  it("Try it runs the agent and shows the tools it called; the run is listed with them", async () => {
    await detail().getByLabel("Message to @release-desk").fill("What are my todos?");
    await detail().getByRole("button", { name: "Send" }).click();
    const answer = detail().getByRole("list", { name: "Try-it transcript" }).locator(".agent-answer");
    await expect.poll(() => answer.textContent(), PATIENCE).toContain("Ship the alpha");
    expect(await answer.textContent()).toContain("tools: list_todos");

    const run = detail().locator(".agent-run").first();
    await expect.poll(() => run.textContent(), PATIENCE).toContain("Tools called: list_todos");
    expect(await run.locator(".agent-run-status").textContent()).toBe("Done");
    expect(await run.textContent()).toContain("asked directly");
    expect(await run.locator(".agent-run-input").textContent()).toBe("What are my todos?");

    // Markup in a message is shown as text.
    await detail().getByLabel("Message to @release-desk").fill(HOSTILE);
    await detail().getByRole("button", { name: "Send" }).click();
    await expect.poll(() => detail().locator(".agent-said").nth(1).textContent(), PATIENCE).toBe(HOSTILE);
    await expect.poll(() => detail().getByRole("button", { name: "Send" }).isDisabled(), PATIENCE).toBe(true);
    await expect.poll(() => detail().locator(".agent-answer").count(), PATIENCE).toBe(2);
    expect(await page.evaluate(() => (window as { __agentPwned?: unknown }).__agentPwned)).toBeUndefined();
    await screenshot(page, "agents");
  });

  it("makes a second key (shown once) and revokes the first: it stops working at once", async () => {
    const keys = detail().getByRole("region", { name: "Keys" });
    await keys.getByLabel("Key label").fill("ci");
    await keys.getByRole("button", { name: "New key" }).click();
    await expect
      .poll(() => keys.getByRole("status").textContent(), PATIENCE)
      .toBe("Made a key “ci”: copy it now, above. It is not shown again.");
    const second = await keyShown();
    expect(second).toMatch(/^svc_sk_/);
    expect(second).not.toBe(firstKey);
    await page.getByRole("button", { name: "Done" }).click();

    await expect.poll(() => keys.getByRole("listitem").count(), PATIENCE).toBe(2);
    // Newest first: the agent's first key is the second.
    const first = keys.getByRole("listitem").nth(1);
    await first.getByRole("button", { name: "Revoke" }).click();
    await first.getByRole("alertdialog").getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => keys.getByRole("status").textContent(), PATIENCE).toBe("Revoked the key: it no longer works.");
    await expect.poll(() => first.textContent(), PATIENCE).toContain("revoked");
    await expect(asAgent(firstKey).call("listTodos", { query: {} })).rejects.toMatchObject({ status: 401 });
    expect((await asAgent(second).call("listTodos", { query: {} })).result.todos).toHaveLength(1);
    firstKey = second;
  });

  it("pauses the agent (its key and Try it are refused, in words), resumes it, changes a setting, and deletes it", async () => {
    await detail().getByRole("button", { name: "Pause" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Paused @release-desk: nothing runs until you resume it.");
    await expect.poll(() => detail().locator(".status-pill").textContent(), PATIENCE).toBe("Paused");
    await expect(asAgent(firstKey).call("listTodos", { query: {} })).rejects.toMatchObject({
      status: 409,
      body: { error: "agent_paused" },
    });
    await detail().getByLabel("Message to @release-desk").fill("What are my todos?");
    await detail().getByRole("button", { name: "Send" }).click();
    await expect.poll(() => detail().locator(".agent-try").textContent(), PATIENCE).toContain("This agent is paused; resume it first.");

    await detail().getByRole("button", { name: "Resume" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Resumed @release-desk: it answers again.");
    expect((await asAgent(firstKey).call("listTodos", { query: {} })).result.todos).toHaveLength(1);

    await detail().getByRole("button", { name: "Settings" }).click();
    const settings = detail().getByRole("form", { name: "Settings" });
    expect(await settings.getByLabel("Policy for create_todo").inputValue()).toBe("ask");
    await settings.getByLabel("Policy for create_todo").selectOption("allow");
    await settings.getByLabel("Name").fill("Release helper");
    await settings.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Saved @release-desk's settings.");
    expect((await user.client.call("getManagedAgent", { params: { id: agentId } })).agent).toMatchObject({
      name: "Release helper",
      toolPolicy: { create_note: "deny" },
    });

    await detail().getByRole("button", { name: "Delete" }).click();
    await detail().getByRole("alertdialog").getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe("Deleted @release-desk with its keys and runs.");
    await expect.poll(() => view().textContent(), PATIENCE).toContain("No agent yet.");
    await expect(asAgent(firstKey).call("listTodos", { query: {} })).rejects.toMatchObject({ status: 401 });
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });

  it("the host: a key without os.agents is told in words, a pairing-code key may manage agents, another's agent is gone", async () => {
    const session = (apiKey: string) =>
      ({
        credentials: () => ({ serverUrl: app.ts.server.url, apiKey, userId: 1 }),
        client: () => serverClient(app.ts.server.url, apiKey),
      }) as unknown as SessionService;
    const narrow = await app.ts.addUser("nat", ["os.notes:read"]);
    expect(await createManagedAgentMethods(session(narrow.apiKey)).listManagedAgents()).toMatchObject({
      supported: true,
      agents: [],
      notAllowed: AGENTS_NOT_ALLOWED,
    });
    const paired = await app.ts.addUser("pat", SIGN_IN_SCOPES);
    const methods = createManagedAgentMethods(session(paired.apiKey));
    const made = await methods.createManagedAgent({ handle: "pats-desk" });
    expect((await methods.listManagedAgents()).agents.map((agent) => agent.handle)).toEqual(["pats-desk"]);
    await expect(methods.createManagedAgent({ handle: "admin" })).rejects.toThrow("reserved word");
    await expect(methods.runManagedAgent({ id: made.agent.id, input: "  " })).rejects.toThrow("must not be empty");
    const other = await app.ts.addUser("eve");
    await expect(
      createManagedAgentMethods(session(other.apiKey)).setManagedAgentPaused({ id: made.agent.id, paused: true }),
    ).rejects.toThrow(AGENT_GONE);
  });
});
