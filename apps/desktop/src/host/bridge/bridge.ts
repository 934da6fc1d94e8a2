import type { RealtimeEvent } from "@tandem/core";
import { GrantRow } from "@tandem/core";
import { z } from "zod";
import type { BridgeRuntime, BridgeStatus } from "../../shared/desktop-api";
import type { BridgeFacet } from "../facets";
import type { HostContext } from "../host-context";
import type { UserStreamEvent } from "../inbox/user-stream";
import { parseInput } from "../parse-input";
import { bridgeActivity } from "./bridge-activity";
import { BridgeSettings, type PairingRecord } from "./bridge-settings";
import { type DevicePairing, type PairingOutcome, startDevicePairing } from "./device-pairing";
import { EndpointRunner } from "./endpoint-runner";
import { GuestAnswerLog } from "./guest-answer-log";
import { OwnerApprovals } from "./owner-approvals";
import { OwnerGrants } from "./owner-grants";
import { OwnerRequests } from "./owner-requests";
import { PeopleDirectory } from "./people";
import { createRuntime, runtimeInstalled } from "./runtime/create-runtime";
import { BridgeSpool } from "./spool";
import { wireClient } from "./wire-client";

export interface BridgeHandle {
  readonly facet: BridgeFacet;
  status(): BridgeStatus;
  /** Tool calls waiting for the owner. */
  pendingApprovals(): number;
  /** Agent-access and grant requests waiting for the owner. */
  pendingRequests(): number;
  /**
   * Reads both counts from the server now, waiting at most `maxWaitMs` (a slow or absent server
   * leaves the last counts): a window opening shows what waits now, not as of the last poll.
   */
  refreshWaiting(maxWaitMs: number): Promise<void>;
  close(): Promise<void>;
}

/** How often the paired runtime's program is looked for (it may be installed or removed meanwhile). */
const RUNTIME_CHECK_MS = 15_000;

const StartPairingInput = z.object({ runtime: z.enum(["claude-code", "codex", "fake"]) });
const AnswerGuestsInput = z.object({ enabled: z.boolean() });

/** Why a paired runtime cannot answer guests: it cannot be held to a run without tools. */
const CANNOT_ANSWER_GUESTS =
  "Codex cannot answer guests: it cannot be limited to a run without tools. Pair this computer as Claude Code to answer guests here.";

const PAIRING_ENDED: Record<Exclude<PairingOutcome["status"], "approved">, string | null> = {
  denied: "Pairing was denied.",
  expired: "The pairing code expired before it was approved.",
  consumed: "That pairing code was already used.",
  cancelled: null,
};

/**
 * The owner's bridge: pairs this app as a runtime endpoint by device code, then (while the owner
 * who paired it is signed in) runs it: session, default route, heartbeat, realtime stream, spool,
 * injection and runtime. It also answers the owner's approvals and grants, and tells Electron's
 * main process through `context.events`: `status` on any change of {@link BridgeHandle.status} or
 * the pending count, `approval` (ApprovalItem) for each new pending tool call, `grant-request`
 * (GrantItem) when someone asks for a grant.
 */
export async function startBridge(context: HostContext): Promise<BridgeHandle> {
  const settings = new BridgeSettings(context.store, context.config.secrets);
  const spool = new BridgeSpool(context.store.db);
  const guestLog = new GuestAnswerLog(context.store.db);
  // Guest runs the last launch left unfinished (it quit or crashed mid-run) are over: never run again.
  await guestLog.markInterrupted();
  const people = new PeopleDirectory(context.session);
  const grants = new OwnerGrants(context.session, people);

  let pairing: PairingRecord | null = await settings.pairing();
  let pairingRun: { run: DevicePairing; runtime: BridgeRuntime } | null = null;
  let runner: EndpointRunner | null = null;
  /** Why the bridge is unpaired or failed, for the owner. */
  let note: { error: boolean; message: string } | null = null;
  let activeTasks = (await spool.activeCount()) + (await guestLog.runningCount());
  let closed = false;
  /** Whether the paired runtime's program is here; null until looked for, or unpaired. */
  let installed: { runtime: BridgeRuntime; value: boolean } | null = null;
  /** The owner's setting: answer guests of locally answered share links from this computer. */
  let answerGuests = await settings.answerGuests();

  let lastEmitted = "";
  const notify = () => {
    const snapshot = JSON.stringify([status(), approvals.pendingCount(), requests.pendingCount()]);
    if (snapshot === lastEmitted) return;
    lastEmitted = snapshot;
    context.events.emit("status");
  };
  const approvals = new OwnerApprovals(context, people, notify);
  const requests = new OwnerRequests(context.session, grants, notify);

  // Pairing, unpairing, sign-in changes and revocations each change several things: one at a time.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(step: () => Promise<T>): Promise<T> => {
    const next = queue.then(step);
    queue = next.catch(() => {});
    return next;
  };

  /** Why guests are not answered although the setting is on; null when they are, or when it is off. */
  function guestsNote(): string | null {
    if (!answerGuests) return null;
    if (!pairing) return "Pair this computer to answer guests here.";
    if (!canAnswerGuests(pairing.runtime)) return CANNOT_ANSWER_GUESTS;
    if (runner?.state !== "online") return "Guests are answered once the bridge is online; until then your server's agent answers them.";
    return runner.guestsProblem;
  }

  function canAnswerGuests(runtime: BridgeRuntime): boolean {
    return createRuntime(runtime, context.config.bridge).runsWithoutTools;
  }

  async function setAnswerGuests(input: unknown): Promise<BridgeStatus> {
    const { enabled } = parseInput("setBridgeGuestAnswering", AnswerGuestsInput, input);
    return serial(async () => {
      if (enabled && pairing && !canAnswerGuests(pairing.runtime)) throw new Error(CANNOT_ANSWER_GUESTS);
      await settings.saveAnswerGuests(enabled);
      answerGuests = enabled;
      await runner?.answerGuests(enabled);
      notify();
      return status();
    });
  }

  function status(): BridgeStatus {
    const runtimeInstalledNow = pairing && installed?.runtime === pairing.runtime ? installed.value : null;
    const base = {
      activeTasks,
      pairing: null,
      message: null,
      runtimeInstalled: runtimeInstalledNow,
      answerGuests,
      answerGuestsNote: guestsNote(),
    };
    if (pairingRun) {
      const { run, runtime } = pairingRun;
      return { ...base, state: "pairing", runtime, endpointId: pairing?.endpointId ?? null, pairing: run.prompt };
    }
    if (!pairing) {
      const state = note?.error ? "error" : "unpaired";
      return { ...base, state, runtime: null, endpointId: null, message: note?.message ?? null };
    }
    const paired = { ...base, runtime: pairing.runtime, endpointId: pairing.endpointId };
    if (!runner) {
      const message = `Sign in as the account that paired this bridge (on ${pairing.serverUrl}) to run it.`;
      return { ...paired, state: "offline", message };
    }
    return { ...paired, state: runner.state, message: runner.message };
  }

  const checkRuntime = () => {
    const runtime = pairing?.runtime;
    if (!runtime) return;
    void runtimeInstalled(runtime, context.config.bridge).then((value) => {
      installed = { runtime, value };
      notify();
    });
  };
  const runtimeTimer = setInterval(checkRuntime, RUNTIME_CHECK_MS);

  const refreshActivity = () => {
    Promise.all([spool.activeCount(), guestLog.runningCount()]).then(
      ([tasks, guests]) => {
        activeTasks = tasks + guests;
        notify();
      },
      () => {}, // The store is closing with the host.
    );
  };

  /** The device's stream: the kinds a bridge knows (docs/delegation/realtime.md). */
  function onStreamEvent(event: RealtimeEvent): void {
    if (event.type === "grant.request") {
      const row = GrantRow.safeParse(event.data);
      if (row.success) void grants.item(row.data).then((item) => context.events.emit("grant-request", item));
      void requests.refresh();
    }
  }

  /** Runs the endpoint exactly when it is paired and its owner is signed in to its server. */
  async function reconcile(): Promise<void> {
    const credentials = context.session.credentials();
    const wanted =
      !closed &&
      pairing !== null &&
      credentials !== null &&
      sameServer(credentials.serverUrl, pairing.serverUrl) &&
      credentials.userId === pairing.userId;
    if (wanted && pairing && !runner) {
      const token = await settings.deviceToken();
      if (!token) {
        await settings.forgetPairing();
        pairing = null;
        note = { error: true, message: "The bridge's device token is missing from the secret store; pair again." };
      } else {
        const record = pairing;
        const started: EndpointRunner = new EndpointRunner({
          context,
          pairing: record,
          deviceToken: token,
          spool,
          guestLog,
          people,
          runtime: createRuntime(record.runtime, context.config.bridge),
          loadCursor: () => settings.cursor(record.endpointId),
          saveCursor: (cursor) => settings.saveCursor(record.endpointId, cursor),
          saveSessionHandle: async (handle) => {
            if (pairing?.endpointId !== record.endpointId) return;
            pairing = { ...pairing, sessionHandle: handle };
            await settings.savePairing(pairing);
          },
          onEvent: onStreamEvent,
          onChange: () => {
            refreshActivity();
            notify();
          },
          onInterrupted: (messageId) => void approvals.withdraw(messageId),
          onRevoked: () => void serial(() => revoked(started)),
        });
        runner = started;
        void started.answerGuests(answerGuests);
      }
    } else if (!wanted && runner) {
      const stopping = runner;
      runner = null;
      await stopping.stop();
    }
    checkRuntime();
    notify();
  }

  /** The server refused this runner's token: the pairing is over (unless a newer one replaced it). */
  async function revoked(which: EndpointRunner): Promise<void> {
    if (runner !== which) return;
    runner = null;
    await which.stop();
    pairing = null;
    await settings.forgetPairing();
    note = { error: false, message: "This endpoint was revoked on the server. Pair again to receive tasks." };
    notify();
  }

  async function startPairing(input: unknown) {
    const { runtime } = parseInput("startBridgePairing", StartPairingInput, input);
    const credentials = context.session.credentials();
    if (!credentials) throw new Error("Sign in before pairing the bridge");
    const run = await startDevicePairing({
      serverUrl: credentials.serverUrl,
      deviceId: await settings.deviceId(),
      runtime,
      bridgeVersion: context.config.version,
    });
    pairingRun?.run.cancel();
    pairingRun = { run, runtime };
    note = null;
    notify();
    void run.outcome.then((outcome) => serial(() => finishPairing(run, runtime, credentials, outcome)));
    return run.prompt;
  }

  async function finishPairing(
    run: DevicePairing,
    runtime: BridgeRuntime,
    credentials: { serverUrl: string; userId: number },
    outcome: PairingOutcome,
  ): Promise<void> {
    if (pairingRun?.run !== run) return; // Superseded by a newer pairing, or cancelled by unpairing.
    pairingRun = null;
    if (outcome.status !== "approved") {
      note = PAIRING_ENDED[outcome.status] ? { error: false, message: PAIRING_ENDED[outcome.status] as string } : null;
      return notify();
    }
    if (outcome.userId !== credentials.userId) {
      // The bridge must serve the signed-in owner, whose approvals this app shows: refuse anyone else.
      await revokeEndpoint(credentials.serverUrl, outcome.endpointId, outcome.deviceToken);
      note = { error: true, message: "The pairing was approved by another account than the one signed in here; it was revoked." };
      return notify();
    }
    if (runner) {
      const previous = runner;
      runner = null;
      await previous.stop();
    }
    const sessionHandle = pairing?.endpointId === outcome.endpointId ? pairing.sessionHandle : null;
    pairing = { endpointId: outcome.endpointId, runtime, serverUrl: credentials.serverUrl, userId: outcome.userId, sessionHandle };
    await settings.savePairing(pairing, outcome.deviceToken);
    note = null;
    await reconcile();
  }

  async function unpair(): Promise<BridgeStatus> {
    return serial(async () => {
      pairingRun?.run.cancel();
      pairingRun = null;
      if (runner) {
        const stopping = runner;
        runner = null;
        await stopping.stop();
      }
      if (pairing) {
        const token = await settings.deviceToken();
        const revokedOnServer = token ? await revokeEndpoint(pairing.serverUrl, pairing.endpointId, token) : false;
        note = revokedOnServer
          ? null
          : { error: false, message: "Unpaired here, but the server could not be told: revoke the endpoint from the web app." };
        await settings.forgetPairing();
        pairing = null;
      }
      notify();
      return status();
    });
  }

  /** Revokes an endpoint with its own token, else with the owner's key; answers whether the server took it. */
  async function revokeEndpoint(serverUrl: string, endpointId: string, deviceToken: string): Promise<boolean> {
    const attempts = [wireClient(serverUrl, deviceToken)];
    const owner = context.session.client();
    if (owner && sameServer(context.session.credentials()?.serverUrl ?? "", serverUrl)) attempts.push(owner);
    for (const client of attempts) {
      try {
        await client.call("revokeRuntimeEndpoint", { params: { id: endpointId } });
        return true;
      } catch {
        // Try the next credential: an endpoint already revoked still answers 200 to its owner.
      }
    }
    return false;
  }

  // A tool call waiting for the owner is announced on the owner's user stream (the inbox follows it), not the device's.
  const onUserEvent = (event: UserStreamEvent) => {
    if (event.type === "tool.approval_requested") void approvals.refresh();
  };
  context.events.on("user-event", onUserEvent);

  // Sign-in and sign-out wait for this: the bridge has started or stopped when they answer.
  const unsubscribe = context.session.onChange(() => {
    people.clear();
    void approvals.refresh();
    void requests.refresh();
    return serial(reconcile);
  });
  approvals.start();
  requests.start();
  await serial(reconcile);

  return {
    status,
    pendingApprovals: () => approvals.pendingCount(),
    pendingRequests: () => requests.pendingCount(),
    refreshWaiting: async (maxWaitMs) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxWaitMs);
      });
      await Promise.race([Promise.all([approvals.refresh(), requests.refresh()]), waited]);
      clearTimeout(timer);
    },
    facet: {
      getBridgeStatus: async () => status(),
      startBridgePairing: (input) => startPairing(input),
      unpairBridge: () => unpair(),
      listApprovals: () => approvals.list(),
      resolveApproval: (input) => approvals.resolve(input),
      listGrants: () => grants.list(),
      // A grant answered leaves the requests waiting: the badge follows at once.
      acceptGrant: (input) => grants.accept(input).finally(() => void requests.refresh()),
      declineGrant: (input) => grants.decline(input).finally(() => void requests.refresh()),
      revokeGrant: (input) => grants.revoke(input),
      listBridgeActivity: () => bridgeActivity(spool, guestLog, context.session, people),
      setBridgeGuestAnswering: (input) => setAnswerGuests(input),
      listAccessRequests: () => requests.list(),
      answerAccessRequest: (input) => requests.answer(input),
    },
    async close() {
      closed = true;
      clearInterval(runtimeTimer);
      unsubscribe();
      context.events.off("user-event", onUserEvent);
      approvals.stop();
      requests.stop();
      pairingRun?.run.cancel();
      pairingRun = null;
      await serial(reconcile);
    },
  };
}

function sameServer(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}
