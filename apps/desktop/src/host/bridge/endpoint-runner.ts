import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { RealtimeEvent, TandemClient } from "@tandem/core";
import type { HostContext } from "../host-context";
import type { PairingRecord } from "./bridge-settings";
import type { GuestAnswerLog } from "./guest-answer-log";
import { DEFAULT_GUEST_POLL_MS, GuestAnswerer } from "./guest-answerer";
import { Injector } from "./injector";
import type { PeopleDirectory } from "./people";
import { followRealtime, type RealtimeFollower } from "./realtime-follower";
import type { RuntimeAdapter } from "./runtime/runtime-adapter";
import type { BridgeSpool } from "./spool";
import { ToolGate } from "./tool-gate";
import { delay, describeError, HEARTBEAT_TIMEOUT_MS, isApiError, retryTransport, wireClient } from "./wire-client";

const DEFAULT_HEARTBEAT_MS = 20_000;
const MAX_START_BACKOFF_MS = 30_000;

export type RunnerState = "connecting" | "online" | "offline";

export interface EndpointRunnerOptions {
  readonly context: HostContext;
  readonly pairing: PairingRecord;
  readonly deviceToken: string;
  readonly spool: BridgeSpool;
  readonly guestLog: GuestAnswerLog;
  readonly people: PeopleDirectory;
  readonly runtime: RuntimeAdapter;
  readonly loadCursor: () => Promise<string>;
  readonly saveCursor: (cursor: string) => Promise<void>;
  /** The session handle the server gave (kept so restarts re-announce the same session). */
  readonly saveSessionHandle: (handle: string) => Promise<void>;
  /** Events for the rest of the bridge (approval requests, grant requests). */
  readonly onEvent: (event: RealtimeEvent) => void;
  readonly onChange: () => void;
  /** A message whose runtime stopped with the app (see Injector). */
  readonly onInterrupted: (messageId: string) => void;
  /** The server no longer knows this endpoint's token: the pairing is over. */
  readonly onRevoked: () => void;
}

/**
 * The paired endpoint at work: announces its session and the owner's default route, heartbeats,
 * follows the realtime stream from the persisted cursor, and hands dispatched messages to the
 * injector. Every step retries with backoff while the server is unreachable.
 */
export class EndpointRunner {
  #state: RunnerState = "connecting";
  #message: string | null = null;
  readonly #controller = new AbortController();
  #heartbeat: NodeJS.Timeout | undefined;
  #follower: RealtimeFollower | undefined;
  #injector: Injector | undefined;
  /** Whether the owner wants guests answered here, and the answerer doing it once the endpoint is up. */
  #guestsWanted = false;
  #guestsReady = false;
  #guests: GuestAnswerer | undefined;
  /** Why the answerer could not start (its working directory, say); cleared by the next change. */
  #guestsFailure: string | null = null;
  /** Starting and stopping the answerer, one change at a time. */
  #guestsChange: Promise<void> = Promise.resolve();
  readonly #started: Promise<void>;

  constructor(private readonly options: EndpointRunnerOptions) {
    this.#started = this.#start();
  }

  get state(): RunnerState {
    return this.#state;
  }

  get message(): string | null {
    return this.#message;
  }

  /** Why guests are not being answered although the owner turned it on; null when they are (or it is off). */
  get guestsProblem(): string | null {
    return this.#guestsFailure ?? this.#guests?.problem ?? null;
  }

  /** Turns answering guests from this computer on or off (the owner's setting); follows once the endpoint is up. */
  answerGuests(wanted: boolean): Promise<void> {
    this.#guestsWanted = wanted;
    this.#guestsChange = this.#guestsChange.then(async () => {
      try {
        this.#guestsFailure = null;
        await this.#applyGuests();
      } catch (error) {
        this.#guestsFailure = `Cannot answer guests here: ${describeError(error)}`;
      }
      this.options.onChange();
    });
    return this.#guestsChange;
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    clearInterval(this.#heartbeat);
    await this.#started;
    await this.answerGuests(false);
    await this.#follower?.stop();
    await this.#injector?.stop();
    await this.options.runtime.close();
  }

  async #applyGuests(): Promise<void> {
    const { context, runtime, pairing } = this.options;
    const wanted = this.#guestsWanted && this.#guestsReady && !this.#controller.signal.aborted && runtime.runsWithoutTools;
    if (wanted && !this.#guests) {
      const workDir = path.join(context.config.dataDir, "bridge-guest-workspace");
      await mkdir(workDir, { recursive: true });
      this.#guests = new GuestAnswerer({
        device: wireClient(pairing.serverUrl, this.options.deviceToken),
        serverUrl: pairing.serverUrl,
        runtime,
        log: this.options.guestLog,
        workDir,
        pollMs: context.config.bridge?.guestPollMs ?? DEFAULT_GUEST_POLL_MS,
        onActivity: this.options.onChange,
      });
    } else if (!wanted && this.#guests) {
      const stopping = this.#guests;
      this.#guests = undefined;
      await stopping.stop();
    }
  }

  #set(state: RunnerState, message: string | null): void {
    if (state === this.#state && message === this.#message) return;
    this.#state = state;
    this.#message = message;
    this.options.onChange();
  }

  async #start(): Promise<void> {
    const { pairing, deviceToken, context } = this.options;
    const signal = this.#controller.signal;
    const device = wireClient(pairing.serverUrl, deviceToken);
    let sessionHandle: string | undefined;
    for (let backoff = 1_000; !signal.aborted; backoff = Math.min(backoff * 2, MAX_START_BACKOFF_MS)) {
      try {
        sessionHandle = await this.#announce(device);
        break;
      } catch (error) {
        if (isApiError(error, 401)) return this.#revoked();
        this.#set("offline", `Cannot reach the server: ${describeError(error)}`);
        await delay(backoff, signal);
      }
    }
    if (signal.aborted || !sessionHandle) return;

    const heartbeatClient = wireClient(pairing.serverUrl, deviceToken, HEARTBEAT_TIMEOUT_MS);
    this.#heartbeat = setInterval(() => {
      heartbeatClient.call("runtimeEndpointHeartbeat", { params: { id: pairing.endpointId } }).catch((error: unknown) => {
        if (isApiError(error, 401)) this.#revoked();
      });
    }, context.config.bridge?.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);

    const workDir = path.join(context.config.dataDir, "bridge-workspace");
    await mkdir(workDir, { recursive: true });
    const toolGate = new ToolGate(device);
    const injector = new Injector({
      device,
      endpointId: pairing.endpointId,
      sessionHandle,
      spool: this.options.spool,
      runtime: this.options.runtime,
      toolGate,
      people: this.options.people,
      workDir,
      onActivity: this.options.onChange,
      onInterrupted: this.options.onInterrupted,
    });
    this.#injector = injector;
    await injector.resume();
    this.#guestsReady = true;
    void this.answerGuests(this.#guestsWanted);

    this.#follower = followRealtime({
      serverUrl: pairing.serverUrl,
      deviceToken,
      endpointId: pairing.endpointId,
      cursor: await this.options.loadCursor(),
      onEvent: async (event) => {
        if (event.type === "message.dispatch") await injector.receive(event.data);
        else if (event.type === "tool.approval_decision") toolGate.onDecision(event.data);
        else this.options.onEvent(event);
      },
      saveCursor: this.options.saveCursor,
      onConnection: (connected, problem) => {
        if (connected) {
          this.#set("online", null);
          injector.wake(); // Entries that waited for the server get their turn.
        } else this.#set("offline", problem);
      },
      onRevoked: () => this.#revoked(),
    });
  }

  /**
   * Registers (or re-announces) the session grants are delivered to, accepting inbound work, and
   * points the owner's default route at it. Registration also counts as a heartbeat.
   */
  async #announce(device: TandemClient): Promise<string> {
    const { pairing } = this.options;
    await device.call("runtimeEndpointHeartbeat", { params: { id: pairing.endpointId } });
    try {
      return await this.#announceSession(device, pairing.sessionHandle);
    } catch (error) {
      // The session kept from before cannot serve any more (closed, or no longer this endpoint's): start a new one.
      if (pairing.sessionHandle && (isApiError(error, 404) || isApiError(error, 409))) return this.#announceSession(device, null);
      throw error;
    }
  }

  async #announceSession(device: TandemClient, handle: string | null): Promise<string> {
    const { pairing } = this.options;
    const registered = await retryTransport(() =>
      device.call("registerRuntimeSession", {
        body: {
          endpointId: pairing.endpointId,
          handle: handle ?? undefined,
          label: "Tandem desktop",
          state: "idle",
          deliveryMode: "managed_stream",
          capabilities: ["task_invite", "text", "resource_request"],
          allowInbound: true,
          allowMidTurnSteer: false,
        },
      }),
    );
    await retryTransport(() =>
      device.call("setDefaultRoute", { body: { endpointId: pairing.endpointId, sessionHandle: registered.sessionHandle } }),
    );
    if (registered.sessionHandle !== pairing.sessionHandle) await this.options.saveSessionHandle(registered.sessionHandle);
    return registered.sessionHandle;
  }

  #revoked(): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort();
    clearInterval(this.#heartbeat);
    void this.answerGuests(false);
    this.options.onRevoked();
  }
}
