/**
 * The one API the renderer uses to reach the host. Electron's preload provides it over IPC and
 * web mode provides it over HTTP, so the renderer never knows which one it runs in.
 *
 * Notes, folders and todos are not here: the renderer edits their Yjs documents directly, through
 * the host's local sync hub (see {@link LocalSyncInfo}), so editing works the same offline.
 * Everything here is plain JSON in and out.
 */
export interface DesktopApi {
  getAppInfo(): Promise<AppInfo>;

  // Sign-in (src/host/session)
  getSession(): Promise<SessionInfo>;
  /** Checks the key against the server (`GET /identity`), then keeps it in the secret store. */
  signInWithApiKey(input: { serverUrl: string; apiKey: string }): Promise<SessionInfo>;
  /** Starts device-code sign-in: the owner approves at `approvalUrl`; then {@link pollSignInPairing}. */
  startSignInPairing(input: { serverUrl: string }): Promise<PairingPrompt>;
  pollSignInPairing(): Promise<SignInPairingProgress>;
  /** Forgets the credentials and stops replication; the local copy of the documents stays. */
  signOut(): Promise<SessionInfo>;

  // Local-first sync (src/host/store, src/host/replication)
  /** Where the renderer opens documents: the host's sync hub on 127.0.0.1, with this launch's secret. */
  getLocalSync(): Promise<LocalSyncInfo>;
  /**
   * The notes and folders as the workspace document held them when last stored on this machine (null
   * before the first time, and when signed out): the notes view shows it while the live workspace
   * document loads, which for tens of thousands of notes takes a while. The text the host stored,
   * unparsed: read it with `decodeWorkspaceOutline` (shared/workspace-outline.ts). `firstScreen`:
   * only the folders and the first notes of the list (a few KB), shown while the whole one comes.
   */
  getWorkspaceOutline(input?: { firstScreen?: boolean }): Promise<string | null>;
  /**
   * Sync, bridge and approvals at a glance; the renderer polls it (about once a second). `fresh`: the
   * counts of what waits for the owner are read from the server first (briefly; the page asks so as
   * it starts, so its first frame shows what waits now).
   */
  getStatus(input?: { fresh?: boolean }): Promise<HostStatus>;

  // Notes services that need the server or a scan (src/host/workspace)
  /** Server search when online, a scan of the local documents when not. */
  searchNotes(input: { query: string }): Promise<NoteSearchAnswer>;
  /** The start of each note's text (one line, from this device's copies), for the note list; at most 500 notes a call. */
  notePreviews(input: { noteUuids: string[] }): Promise<Record<string, string>>;
  listSnapshots(input: { noteUuid: string }): Promise<SnapshotSummary[]>;
  getSnapshot(input: { noteUuid: string; seq: number }): Promise<SnapshotPreview>;
  createSnapshot(input: { noteUuid: string; label?: string }): Promise<SnapshotSummary>;
  restoreSnapshot(input: { noteUuid: string; seq: number }): Promise<void>;

  // The bridge (src/host/bridge)
  getBridgeStatus(): Promise<BridgeStatus>;
  /** Pairs this app as a runtime endpoint by device code; the bridge polls and starts by itself once approved. */
  startBridgePairing(input: { runtime: BridgeRuntime }): Promise<PairingPrompt>;
  /** Revokes the endpoint on the server and forgets its device token. */
  unpairBridge(): Promise<BridgeStatus>;
  /** Tool calls waiting for the owner, newest first (they live on the server, so they survive restarts). */
  listApprovals(): Promise<ApprovalItem[]>;
  resolveApproval(input: { approvalId: string; decision: "allow" | "deny"; scope?: "once" | "session" }): Promise<void>;
  /** Grants where the owner is requester or recipient. */
  listGrants(): Promise<GrantItem[]>;
  acceptGrant(input: { grantId: string }): Promise<void>;
  declineGrant(input: { grantId: string }): Promise<void>;
  revokeGrant(input: { grantId: string }): Promise<void>;
  /** What the bridge did lately, newest first: tasks received and guests answered, from whom, their outcome, the tool calls decided. */
  listBridgeActivity(): Promise<BridgeActivityItem[]>;
  /** Turns answering guests of locally answered share links from this computer on or off (off by default); answers the new status. */
  setBridgeGuestAnswering(input: { enabled: boolean }): Promise<BridgeStatus>;
  /** People asking for agent access to the owner (the handshake), newest first. */
  listAccessRequests(): Promise<AccessRequestItem[]>;
  /** Accept (with what their agent may reach) or decline an agent-access request. */
  answerAccessRequest(input: { requestId: number; action: "accept" | "decline"; access?: AgentAccessChoice }): Promise<void>;

  // The personal agent and the briefing (src/host/agent): they run on the server, so these need it.
  /** The owner's conversations with their agent, newest first (without their messages). */
  listConversations(): Promise<ConversationSummary[]>;
  /** One conversation with its messages, oldest first. */
  getConversation(input: { conversationId: number }): Promise<ConversationDetail>;
  deleteConversation(input: { conversationId: number }): Promise<void>;
  /**
   * Sends a message (continuing `conversationId` if given). Answers once the server has accepted it,
   * so a refusal rejects here; the reply then streams into the run that {@link readChat} follows.
   */
  startChat(input: { message: string; conversationId?: number; userTimezone?: string }): Promise<{ chatId: string }>;
  /** What the run received after its first `after` events, waiting up to 10 s for something new. */
  readChat(input: { chatId: string; after: number }): Promise<ChatProgress>;
  /** Stops a reply: the server keeps what was answered so far, marked incomplete. */
  stopChat(input: { chatId: string }): Promise<void>;
  /** The newest briefing, or null when none was written yet. */
  latestBriefing(): Promise<Briefing | null>;
  /** Writes a new briefing (todos due, notes changed lately) for "today" where the owner is. */
  createBriefing(input: { userTimezone: string }): Promise<Briefing>;
  /** The top next steps drawn from a briefing's five summaries. */
  briefingStrategies(input: BriefingSummaries): Promise<Strategy[]>;
  /** A briefing's items in the four quadrants of urgent and important. */
  briefingMatrix(input: BriefingSummaries): Promise<PriorityMatrix>;
  /** Marks every message of a conversation read (the heartbeat's arrive unread). */
  markConversationRead(input: { conversationId: number }): Promise<void>;

  // The heartbeat (src/host/agent/heartbeat.ts): the agent's periodic pass, run by the server.
  /** The tier, the schedule, and how the runs are going. */
  getHeartbeat(): Promise<HeartbeatOverview>;
  /** Changes the tier and/or the schedule (fields left out keep their value); answers what the server stored. */
  saveHeartbeatSettings(input: { tier?: HeartbeatTier; schedule?: Partial<HeartbeatScheduleSettings> }): Promise<HeartbeatSettings>;
  /** The newest runs, newest first (without their actions). */
  listHeartbeatRuns(): Promise<HeartbeatRunItem[]>;
  /** One run with its actions. */
  getHeartbeatRun(input: { runId: number }): Promise<HeartbeatRunDetail>;
  /** Runs a heartbeat now, waiting for it to end; a dry run writes and sends nothing and says what it would have done. */
  runHeartbeat(input: { dryRun: boolean }): Promise<HeartbeatRunDetail>;
  /** The checklist the heartbeat follows (the note Memory/Self/HEARTBEAT.md, or the default one). */
  getHeartbeatChecklist(): Promise<HeartbeatChecklist>;
  saveHeartbeatChecklist(input: { content: string }): Promise<HeartbeatChecklist>;

  // Connections (src/host/connections): what the agent's tools reach, kept on the server.
  /** Every tool namespace and whether it is on for the owner (off: its tools leave the agent and `POST /tools`). */
  listToolNamespaces(): Promise<ToolNamespaceItem[]>;
  /** Switches one namespace on or off; answers every namespace as the server now has them. */
  setToolNamespace(input: { namespace: string; enabled: boolean }): Promise<ToolNamespaceItem[]>;
  /** OAuth integrations and remote tool servers with their health, as one list. */
  listToolIntegrations(): Promise<IntegrationItem[]>;
  removeToolIntegration(input: { id: string }): Promise<void>;
  /** Remote tool servers (MCP); `supported: false` when the server has no such routes. */
  listMcpServers(): Promise<McpServerList>;
  addMcpServer(input: { name: string; serverUrl: string }): Promise<McpServerItem>;
  updateMcpServer(input: { id: string; name?: string; serverUrl?: string }): Promise<McpServerItem>;
  /** Starts signing in to a remote tool server: the page opens `authorizeUrl` in the browser, then polls the list. */
  authorizeMcpServer(input: { id: string }): Promise<McpAuthorization>;
  /** Checks the server's health and reads its tools again. */
  refreshMcpServer(input: { id: string }): Promise<McpServerItem>;
  /** Drops the stored sign-in; the server stays in the list. */
  disconnectMcpServer(input: { id: string }): Promise<McpServerItem>;
  removeMcpServer(input: { id: string }): Promise<void>;
  /** Apps the owner let into their account through OAuth; `supported: false` when the server has no such routes. */
  listConnectedApps(): Promise<ConnectedAppList>;
  /** Disconnects an app: its tokens stop working at once. */
  revokeConnectedApp(input: { clientId: string }): Promise<void>;
  /** Webhook endpoints (Standard Webhooks) with the events one may pick; `supported: false` when the server has no such routes. */
  listWebhooks(): Promise<WebhookList>;
  /** Adds an endpoint; the answer carries its signing secret, which no later answer shows. */
  addWebhook(input: { url: string; events: readonly string[]; description?: string }): Promise<WebhookWithSecret>;
  /** Turns an endpoint off or on again (on again forgets the failures that turned it off). */
  setWebhookEnabled(input: { id: string; enabled: boolean }): Promise<WebhookItem>;
  /** A new signing secret, shown once; the old one keeps signing beside it for 24 hours. */
  rotateWebhookSecret(input: { id: string }): Promise<WebhookWithSecret>;
  /** Queues a `webhook.test` delivery to the endpoint now. */
  testWebhook(input: { id: string }): Promise<WebhookDeliveryItem>;
  /** The endpoint's newest deliveries, newest first, with their attempts. */
  listWebhookDeliveries(input: { id: string }): Promise<WebhookDeliveryItem[]>;
  /** Sends a finished delivery again (same webhook-id and body). */
  replayWebhookDelivery(input: { id: string; deliveryId: string }): Promise<WebhookDeliveryItem>;
  /** Removes an endpoint with its pending deliveries and its log. */
  removeWebhook(input: { id: string }): Promise<void>;

  // Managed agents (src/host/agents): server-hosted agents of the owner's, with their keys and runs.
  /** The owner's agents, with what the form offers (the notes and todos tools, the owner's own folders); `supported: false` on an older server. */
  listManagedAgents(): Promise<ManagedAgentList>;
  /** Creates an agent; the answer carries its first API key, which no later answer shows. */
  createManagedAgent(input: ManagedAgentSettings & { handle: string }): Promise<ManagedAgentWithKey>;
  /** Changes an agent's settings (its handle stays). */
  updateManagedAgent(input: ManagedAgentSettings & { id: number }): Promise<ManagedAgentItem>;
  /** Pauses an agent (nothing runs, every way of reaching it answers "paused") or resumes it. */
  setManagedAgentPaused(input: { id: number; paused: boolean }): Promise<ManagedAgentItem>;
  /** Deletes an agent with its keys (revoked at once) and its runs. */
  deleteManagedAgent(input: { id: number }): Promise<void>;
  /** The agent's keys, newest first, never a secret. */
  listManagedAgentKeys(input: { id: number }): Promise<ManagedAgentKeyItem[]>;
  /** A new key for the agent; its secret is in this answer only. */
  createManagedAgentKey(input: { id: number; label?: string }): Promise<{ key: ManagedAgentKeyItem; apiKey: string }>;
  /** Revokes one key at once. */
  revokeManagedAgentKey(input: { id: number; keyId: string }): Promise<ManagedAgentKeyItem>;
  /** The agent's newest runs, newest first, with the tools each used. */
  listManagedAgentRuns(input: { id: number }): Promise<ManagedAgentRunItem[]>;
  /** Runs the agent once on a message (its grant and tool policy) and answers the run when it ends. */
  runManagedAgent(input: { id: number; input: string }): Promise<ManagedAgentRunItem>;

  // Escalations (src/host/escalations): agents' actions paused for the owner's Continue / Stop.
  /** What the owner's agents wait for (heartbeat, managed agents, agent RPC; the bridge's are `listApprovals`'); `supported: false` on an older server. */
  listEscalations(): Promise<EscalationList>;
  /** Continue (the recorded call runs once and the run goes on) or stop (the agent is told it was stopped). */
  resolveEscalation(input: { id: string; decision: "continue" | "stop" }): Promise<void>;

  // The inbox (src/host/inbox): conversations with people and groups, kept on the server.
  /** Conversations with people (`coo`), groups (`group`) or both (`all`), newest first, with their unread counts. */
  listInbox(input: { view: InboxView }): Promise<InboxList>;
  /** One conversation with its messages (the newest 1,000), oldest first. */
  openInboxConversation(input: { conversationId: number }): Promise<InboxConversationDetail>;
  /** Marks what others wrote in a conversation read. */
  markInboxRead(input: { conversationId: number }): Promise<void>;
  /** Writes into a conversation as the owner (a person, not their agent); `clientMessageId` makes a retry safe. */
  replyInInbox(input: { conversationId: number; content: string; clientMessageId: string }): Promise<InboxMessage>;
  /** Starts (or continues) a conversation with a contact (username or user id) or a group (`group:<id>`). */
  sendInboxMessage(input: { to: string; message: string }): Promise<{ conversationId: number }>;
  /** The people the owner may message (their contacts); `notAllowed` in words when the key cannot list them. */
  listInboxContacts(): Promise<InboxContactList>;
  /** Creates a group with these contacts (usernames or user ids); the owner is its admin. */
  createInboxGroup(input: { name: string; members: string[] }): Promise<{ conversationId: number }>;
  /** Leaves a group: its messages are no longer the owner's to read; the last admin hands it to the longest-standing member. */
  leaveInboxGroup(input: { conversationId: number }): Promise<void>;
  /** Message requests to the owner: messages from people they are not connected with, held until answered. */
  listInboxRequests(): Promise<InboxRequestList>;
  /** Accepts (connects with the sender; their messages join the inbox), ignores or blocks a message request. */
  answerInboxRequest(input: { requestId: number; action: InboxRequestAction }): Promise<InboxRequestAnswer>;

  // Share links (src/host/share): links to the owner's agent for guests, and their visitors.
  listShareLinks(): Promise<ShareLinkList>;
  createShareLink(input: ShareLinkInput): Promise<ShareLinkItem>;
  /** Sets a new expiry, counted from now. */
  renewShareLink(input: { id: number; expiresIn: ShareLinkExpiry }): Promise<ShareLinkItem>;
  /** Revokes a link at once: its page and chat stop answering. */
  revokeShareLink(input: { id: number }): Promise<void>;
  /** Guest conversations on the owner's links, most recently active first (one link's with `shareToken`). */
  listGuestConversations(input: { shareToken?: string }): Promise<GuestConversationItem[]>;
  /** One guest conversation's messages, oldest first. */
  getGuestConversation(input: { sessionId: string }): Promise<GuestTranscript>;

  // Usage (src/host/usage): this month's meters, budgets and the simulated invoice, from the server.
  getUsage(): Promise<UsageOverview>;
  /** Sets the account's budgets (null: no limit); answers the overview again. */
  saveAccountBudget(input: AccountBudgetInput): Promise<UsageOverview>;
  /** Sets an API key's or a managed agent's budget (both null: none); the other budgets stay. Answers the overview again. */
  saveScopedBudget(input: ScopedBudgetInput): Promise<UsageOverview>;

  // Drafts (src/host/drafts): messages typed in the Inbox or to the Agent and not sent yet, kept on this computer.
  /** The signed-in account's unsent messages of a section, one per conversation (`new`: a message not yet in one). */
  listDrafts(input: { scope: DraftScope }): Promise<DraftItem[]>;
  /**
   * Keeps what is typed for a conversation until it is sent; empty text forgets it (sent, or erased).
   * A write whose `revision` is below the kept one's arrived late and changes nothing.
   */
  saveDraft(input: { scope: DraftScope; conversation: DraftConversation; text: string; revision: number }): Promise<void>;

  // Raw memory (src/host/raw-memory): captured coding-agent sessions, encrypted on this computer (docs/raw-memory.md).
  getRawMemory(): Promise<RawMemoryStatus>;
  /** Enrols this computer; on an account without a key, answers the recovery code (once). */
  enableRawMemory(): Promise<{ recoveryCode: string | null; needsRecovery: boolean }>;
  /** "I saved the recovery code": capture starts. */
  confirmRawMemoryRecovery(): Promise<void>;
  /** This computer joins with the recovery code and reads the old records. */
  recoverRawMemory(input: { code: string }): Promise<void>;
  /** Stops capturing here; what was captured stays. */
  disableRawMemory(): Promise<void>;
  /** Forgets a device: its records go and the key rotates. */
  forgetRawMemoryDevice(input: { deviceId: string }): Promise<{ deletedRecords: number }>;
  /** Searches the captured sessions, decrypted on this computer. */
  searchRawMemory(input: { query: string }): Promise<RawMemoryHit[]>;

  /**
   * What the page holds that is nowhere else yet (edits not saved to the server), in words, or
   * null: Electron's main asks before quitting while there is any.
   */
  setUnsavedWork(input: { description: string | null }): Promise<void>;
  /** Opens a link in the system browser (Electron); web mode answers `opened: false` and the page opens it. */
  openExternal(input: { url: string }): Promise<{ opened: boolean }>;
}

/** Where a draft was typed: the Inbox or the Agent section. */
export type DraftScope = "inbox" | "agent";
/** The conversation a draft belongs to, or `new` for a new message or chat. */
export type DraftConversation = number | "new";
export interface RawMemoryStatus {
  /** `confirm-recovery`: the recovery code was shown and waits for "I saved it"; `needs-recovery`: enrolled, waiting for the code. */
  readonly state: "signed-out" | "off" | "confirm-recovery" | "needs-recovery" | "on";
  readonly deviceId: string | null;
  readonly devices: readonly {
    readonly deviceId: string;
    readonly name: string;
    readonly thisDevice: boolean;
    readonly hasCurrentKey: boolean;
    readonly records: number;
    readonly bytes: number;
    readonly enrolledAt: string;
  }[];
  /** Newest first. */
  readonly captured: readonly {
    readonly recordId: string;
    readonly runtime: "claude-code" | "codex";
    readonly deviceName: string;
    readonly createdAt: string;
    readonly bytes: number;
  }[];
  readonly queued: number;
  readonly refused: readonly { readonly runtime: "claude-code" | "codex"; readonly reason: string; readonly at: string }[];
  readonly roots: { readonly claudeCode: string; readonly codex: string };
  readonly error: string | null;
}

export interface RawMemoryHit {
  readonly recordId: string;
  readonly runtime: "claude-code" | "codex";
  readonly createdAt: string;
  readonly snippet: string;
}

export interface DraftItem {
  readonly conversation: DraftConversation;
  readonly text: string;
  readonly revision: number;
}
/** The longest draft kept: the Agent box's limit (the Inbox's is lower). */
export const DRAFT_TEXT_MAX = 32_000;

export type AppMode = "electron" | "web";

export interface AppInfo {
  readonly name: string;
  readonly version: string;
  /** How the renderer is being served: inside Electron, or to a browser by `src/web`. */
  readonly mode: AppMode;
}

export type SessionInfo =
  | { readonly state: "signed_out"; readonly serverUrl: string | null }
  | {
      readonly state: "signed_in";
      readonly serverUrl: string;
      readonly userId: number;
      readonly username: string;
      readonly name: string | null;
    };

export interface PairingPrompt {
  /** `ABCD-EFGH`, shown to the owner. */
  readonly userCode: string;
  /** The server's approval page; the app offers to open it. */
  readonly approvalUrl: string;
  readonly expiresAt: string;
}

export type SignInPairingProgress =
  | { readonly status: "pending" | "denied" | "expired" }
  | { readonly status: "approved"; readonly session: SessionInfo };

export interface LocalSyncInfo {
  /** `ws://127.0.0.1:<port>`: the host's Hocuspocus, which replicates with the server. */
  readonly url: string;
  /** This launch's secret; the local hub refuses any other token. */
  readonly token: string;
  readonly userId: number;
  /** `workspace:<userId>` and `todos:<userId>`; notes are `note:<uuid>`. */
  readonly workspaceDoc: string;
  readonly todosDoc: string;
}

export type SyncState = "signed_out" | "synced" | "syncing" | "offline" | "error";

export interface SyncStatus {
  readonly state: SyncState;
  /** Documents with changes the server has not confirmed yet. */
  readonly pending: number;
  /** Documents replicated (known to the host). */
  readonly documents: number;
  readonly message: string | null;
}

export interface HostStatus {
  readonly sync: SyncStatus;
  readonly bridge: BridgeStatus;
  /** Tool calls waiting for the owner's decision (the tray's badge). */
  readonly approvalsPending: number;
  /** Agents' actions paused for the owner's Continue / Stop (escalations; the bridge's tool calls are `approvalsPending`). */
  readonly escalationsPending: number;
  /** Agent-access and grant requests waiting for the owner's answer (with the tool calls: the Approvals badge). */
  readonly requestsPending: number;
  /** Messages from the agent not read yet (heartbeat messages arrive unread): the Agent badge. */
  readonly agentUnread: number;
  /** The newest heartbeat message delivered while the app ran (not one already there when it started), or null. */
  readonly heartbeatDelivery: HeartbeatDelivery | null;
  /** Messages from people and groups not read yet: the Inbox badge. */
  readonly inboxUnread: number;
  /** The newest message that arrived from someone while the app ran, or null: the Inbox toast. */
  readonly inboxArrival: InboxArrival | null;
  /** Message requests announced on the channel while the app ran (a count that only grows): the Inbox reads its requests again when it moves. */
  readonly inboxRequestsSeen: number;
}

/** A heartbeat message that reached the owner's agent conversation. */
export interface HeartbeatDelivery {
  readonly runId: number;
  readonly conversationId: number;
  readonly messageId: number;
  /** The message's start, one line. Untrusted (the model wrote it from notes): shown as text. */
  readonly preview: string;
  readonly deliveredAt: string;
}

export interface NoteSearchHit {
  readonly uuid: string;
  readonly title: string;
  readonly snippet: string;
}

export interface NoteSearchAnswer {
  /** `server` when the server answered, `local` when offline. */
  readonly source: "server" | "local";
  readonly results: NoteSearchHit[];
}

export interface SnapshotSummary {
  readonly seq: number;
  readonly label: string | null;
  readonly createdAt: string;
  readonly wordCount: number;
}

export interface SnapshotPreview extends SnapshotSummary {
  /** The snapshot's content as HTML (sanitised by the server's conversion). */
  readonly html: string;
}

/** What the server is told the endpoint runs; `fake` is a scripted runtime for tests (registered as `claude-code`). */
export type BridgeRuntime = "claude-code" | "codex" | "fake";

export type BridgeState = "unpaired" | "pairing" | "connecting" | "online" | "offline" | "error";

export interface BridgeStatus {
  readonly state: BridgeState;
  readonly runtime: BridgeRuntime | null;
  readonly endpointId: string | null;
  /** While pairing: the code to show. */
  readonly pairing: PairingPrompt | null;
  /** Tasks received and not yet finished, and guest messages being answered. */
  readonly activeTasks: number;
  /** Whether the paired runtime's program is on this computer (false: tasks fail until it is installed); null when unpaired. */
  readonly runtimeInstalled: boolean | null;
  readonly message: string | null;
  /** The owner's setting: guests of share links set to be answered by this machine get this computer's coding agent (no tools). */
  readonly answerGuests: boolean;
  /** Why guests are not answered here although the setting is on (the runtime cannot, the bridge is offline…); null otherwise. */
  readonly answerGuestsNote: string | null;
}

export interface ApprovalItem {
  readonly approvalId: string;
  readonly toolName: string;
  /** Untrusted: written by the runtime from the peer's request. Shown as plain text. */
  readonly toolInputSummary: string;
  readonly requesterPrincipalId: string;
  readonly requesterName: string | null;
  readonly communicationSessionId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

export interface GrantItem {
  readonly grantId: string;
  readonly direction: "incoming" | "outgoing";
  readonly peerPrincipalId: string;
  readonly peerName: string | null;
  readonly status: "pending" | "active" | "declined" | "revoked" | "expired";
  readonly requestedAt: string;
  readonly grantExpiresAt: string | null;
}

export type BridgeTaskOutcome =
  | "waiting"
  | "running"
  | "answered"
  | "reply_received"
  | "rejected"
  | "runtime_error"
  | "interrupted"
  /** A guest's answer the server did not take (too late, or the link is gone). */
  | "not_delivered";

export interface BridgeActivityItem {
  /** A grant's message id, or `guest-<id>` for a guest's message on a share link. */
  readonly messageId: string;
  /** `grant`: a task another person's agent sent; `guest`: a guest of one of the owner's share links. */
  readonly source: "grant" | "guest";
  readonly receivedAt: string;
  readonly updatedAt: string;
  /** The sender's principal; null for a guest (anyone with the link). */
  readonly fromPrincipalId: string | null;
  /** The sender's name, or the name a guest gave (unverified). Untrusted: shown as text. */
  readonly fromName: string | null;
  /** The share link's label, for a guest's message. Shown as text. */
  readonly linkLabel: string | null;
  /** The peer's request, cut to one short line. Untrusted: shown as text. */
  readonly request: string;
  readonly outcome: BridgeTaskOutcome;
  /** Why, when it did not end well (the runtime's error, the server's refusal code), in words where there are any. */
  readonly detail: string | null;
  readonly toolCalls: readonly {
    readonly toolName: string;
    readonly status: "auto_allow" | "pending" | "allowed" | "denied" | "expired";
  }[];
}

export interface AccessRequestItem {
  readonly requestId: number;
  readonly fromUserId: string;
  readonly fromUsername: string;
  /** Their display name (their username when they set none). Untrusted: shown as text. */
  readonly fromName: string;
  readonly createdAt: string;
}

/** How far another person's agent may reach one part of the owner's workspace. */
export type AccessLevel = "none" | "read" | "write";

/** What the owner gives with an accepted agent-access request. */
export interface AgentAccessChoice {
  readonly notes: AccessLevel;
  readonly todos: AccessLevel;
}

export interface ConversationSummary {
  readonly conversationId: number;
  /** Untrusted (the start of the first message): shown as text. */
  readonly title: string;
  readonly messageCount: number;
  /** The agent's messages not read yet. */
  readonly unreadCount: number;
  /** The thread the heartbeat writes to. */
  readonly heartbeat: boolean;
  readonly updatedAt: string;
}

export interface ChatMessageItem {
  readonly id: number;
  readonly role: "user" | "assistant";
  /** Markdown from the agent, or what the owner typed. Untrusted: rendered without HTML. */
  readonly content: string;
  /** `incomplete`: the answer was cut short (stopped, or time ran out). */
  readonly status: "complete" | "incomplete";
  readonly toolsUsed: readonly string[];
  readonly createdAt: string;
}

export interface ConversationDetail {
  readonly conversationId: number;
  readonly title: string;
  readonly messages: readonly ChatMessageItem[];
}

/** One line of the server's chat stream, as the host passes it on (lines of unknown types are dropped). */
export type ChatEvent =
  | { readonly type: "conversation-start"; readonly conversationId: number }
  | { readonly type: "text-delta"; readonly textDelta: string }
  | { readonly type: "tool-call-start"; readonly toolName: string; readonly toolCallId: string }
  | { readonly type: "tool-call-end"; readonly toolName: string; readonly toolCallId: string; readonly ok: boolean }
  | { readonly type: "pipeline-progress"; readonly stage: string; readonly elapsedMs: number }
  /** A failure in words for the owner. */
  | { readonly type: "error"; readonly error: string }
  | {
      readonly type: "completion";
      readonly conversationId: number;
      readonly messageId: number | null;
      readonly status: "completed" | "incomplete" | "failed";
    };

/**
 * How a reply ended: as the server's completion says, `stopped` when the owner stopped it, or
 * `failed` (with the reason) when the stream broke off.
 */
export interface ChatEnding {
  readonly status: "completed" | "incomplete" | "failed" | "stopped";
  readonly error: string | null;
}

export interface ChatProgress {
  readonly events: readonly ChatEvent[];
  /** The count of events read so far: the next call's `after`. */
  readonly next: number;
  /** Set once the run is over (after its last event). */
  readonly ended: ChatEnding | null;
}

/** A briefing's five sections, HTML written by the server (sanitised there; the page sanitises again). */
export interface BriefingSummaries {
  readonly statusQuoSummary: string | null;
  readonly todoSummary: string | null;
  readonly calendarSummary: string | null;
  readonly notesSummary: string | null;
  readonly emailAttentionSummary: string | null;
}

export interface Briefing extends BriefingSummaries {
  readonly briefingId: number;
  readonly generatedAt: string;
  /** The window of changed notes it covers ("last 24 hours"). */
  readonly timeDuration: string;
  readonly suggestions: readonly {
    readonly suggestionId: string;
    readonly title: string;
    readonly description: string;
    readonly action: string;
  }[];
}

export interface Strategy {
  readonly priority: number;
  readonly title: string;
  readonly description: string;
  /** A one-line next step. */
  readonly action: string;
  readonly urgencyLevel: string;
  readonly category: string;
}

export interface MatrixItem {
  readonly title: string;
  /** The summary it came from: todo, calendar, email, note, status. */
  readonly source: string;
}

export interface PriorityMatrix {
  readonly q1_urgent_important: readonly MatrixItem[];
  readonly q2_not_urgent_important: readonly MatrixItem[];
  readonly q3_urgent_not_important: readonly MatrixItem[];
  readonly q4_not_urgent_not_important: readonly MatrixItem[];
}

/** `MESSAGES`: reads and sends one message. `ACTIONS`: may also create todos and notes and write memory. */
export type HeartbeatTier = "MESSAGES" | "ACTIONS";

export interface HeartbeatScheduleSettings {
  /** Off: the heartbeat runs only when asked ("Run now"). */
  readonly enabled: boolean;
  /** The interval between scheduled runs (the server allows 5 minutes to a week). */
  readonly everyMinutes: number;
  /** No scheduled run between these times of day (`HH:MM`, may span midnight); null: none. */
  readonly quietHours: { readonly start: string; readonly end: string } | null;
  /** Where the quiet hours and "today" are (IANA, `Europe/Paris`). */
  readonly timezone: string;
}

export interface HeartbeatSettings {
  readonly tier: HeartbeatTier;
  readonly schedule: HeartbeatScheduleSettings;
}

export interface HeartbeatOverview {
  readonly settings: HeartbeatSettings;
  readonly lastRun: HeartbeatRunItem | null;
  readonly runsToday: number;
  readonly runsLast24h: number;
  /** When the next scheduled run is due; null while the schedule is off. */
  readonly nextRunAt: string | null;
  /** The heartbeat thread, once a message was delivered. */
  readonly conversationId: number | null;
}

export interface HeartbeatRunItem {
  readonly runId: number;
  readonly tier: HeartbeatTier;
  /** `requires_action`: paused on an escalation, waiting for the owner's continue or stop. */
  readonly status: "running" | "requires_action" | "completed" | "failed";
  readonly source: "manual" | "schedule";
  readonly dryRun: boolean;
  readonly startedAt: string;
  readonly completedAt: string | null;
  /** The message's first words, or why the run failed. Untrusted: shown as text. */
  readonly summary: string;
  readonly delivered: boolean;
  readonly suppressed: boolean;
  readonly suppressReason: string | null;
  readonly conversationId: number | null;
  readonly toolCalls: number;
  readonly actionsCreated: number;
  readonly error: string | null;
  readonly elapsedMs: number | null;
}

export interface HeartbeatActionItem {
  readonly actionId: number;
  /** The tool's name, or `send_message` for the message itself. */
  readonly type: string;
  /** `message`: reading and the message; `action`: a write (ACTIONS tier only). */
  readonly mode: "message" | "action";
  readonly status: "executed" | "skipped" | "failed";
  /** The tool's arguments and what it answered, as text (JSON laid out, cut when long). Untrusted: shown as text. */
  readonly payload: string;
  readonly result: string;
  readonly createdAt: string;
}

export interface HeartbeatRunDetail extends HeartbeatRunItem {
  /** The message the run wrote, delivered or not (Markdown). Untrusted: rendered without HTML. */
  readonly text: string;
  readonly actions: readonly HeartbeatActionItem[];
}

export interface HeartbeatChecklist {
  /** Markdown, at most {@link HEARTBEAT_CHECKLIST_MAX} characters. */
  readonly content: string;
  /** True while it is the default checklist (the note was not written yet, or says the same). */
  readonly isDefault: boolean;
  readonly updatedAt: string | null;
}

/** Where a namespace's tools come from: the server's own, a remote tool server, an OAuth integration. */
export type ToolSourceKind = "native" | "mcp" | "integration";

export interface ToolNamespaceItem {
  readonly namespace: string;
  readonly sources: readonly ToolSourceKind[];
  /** Every tool of the namespace, whatever the key's scopes. */
  readonly toolCount: number;
  readonly enabled: boolean;
}

/** The health of a remote tool server or an integration, as the server reports it. */
export type ConnectionStatus = "connected" | "needs_reauth" | "disconnected" | "error";

/** A status in words: a short label ("Needs sign-in") and, when there is more to say, what to do or what went wrong. */
export interface ConnectionStatusWords {
  readonly status: ConnectionStatus;
  readonly label: string;
  /** Untrusted when it carries the server's error (a remote server's words): shown as text. */
  readonly detail: string | null;
}

export interface IntegrationItem {
  readonly id: string;
  /** Untrusted: shown as text. */
  readonly name: string;
  readonly kind: "oauth" | "mcp";
  readonly state: ConnectionStatusWords;
  readonly toolCount: number;
}

export interface McpToolItem {
  readonly name: string;
  /** Untrusted (the remote server wrote it): shown as text. */
  readonly description: string;
  readonly readWrite: "read" | "write";
}

export interface McpServerItem {
  readonly id: string;
  /** The namespace its tools appear under. */
  readonly name: string;
  readonly serverUrl: string;
  readonly state: ConnectionStatusWords;
  /** A sign-in is stored (its tokens never leave the server). */
  readonly authorized: boolean;
  readonly toolCount: number;
  readonly tools: readonly McpToolItem[];
  readonly lastCheckedAt: string | null;
}

export interface McpServerList {
  /** False when the server has no remote tool server routes (an older server). */
  readonly supported: boolean;
  readonly servers: readonly McpServerItem[];
  /** Set when the desktop's key lacks the os.tools scopes (a pairing-code sign-in): why the list is empty, in words. */
  readonly notAllowed?: string;
}

export interface McpAuthorization {
  /** An `http(s)` address (the host refuses any other): the remote server's sign-in page. */
  readonly authorizeUrl: string;
  /** When the sign-in must be finished by; null if the server did not say. */
  readonly expiresAt: string | null;
}

export interface ConnectedAppItem {
  readonly clientId: string;
  /** The app's own name, or its client id when it gave none. Untrusted: shown as text. */
  readonly name: string;
  readonly scopes: readonly string[];
  readonly grantedAt: string;
  readonly lastUsedAt: string | null;
  readonly expiresAt: string | null;
}

export interface ConnectedAppList {
  /** False when the server has no connected-apps routes (an older server). */
  readonly supported: boolean;
  readonly apps: readonly ConnectedAppItem[];
}

export interface WebhookItem {
  readonly id: string;
  /** Where deliveries are POSTed. Shown as text. */
  readonly url: string;
  readonly description: string;
  readonly events: readonly string[];
  readonly enabled: boolean;
  /** Why it is off, in words (null while on). */
  readonly disabledReason: string | null;
  /** Since when its deliveries fail, none having succeeded since (null while they succeed). */
  readonly failingSince: string | null;
  /** After a rotation: until when the old secret also signs. */
  readonly previousSecretExpiresAt: string | null;
  readonly createdAt: string;
}

export interface WebhookList {
  /** False when the server has no webhook routes (an older server). */
  readonly supported: boolean;
  readonly webhooks: readonly WebhookItem[];
  /** The events an endpoint may subscribe to, as the server names them. */
  readonly eventTypes: readonly string[];
  /** Set when the desktop's key lacks the os.tools scopes (a pairing-code sign-in): why the list is empty, in words. */
  readonly notAllowed?: string;
}

export interface WebhookWithSecret {
  readonly webhook: WebhookItem;
  /** `whsec_…`: shown this once, for the receiver's Standard Webhooks library. */
  readonly secret: string;
}

export interface WebhookAttemptItem {
  readonly attemptedAt: string;
  /** The receiver's HTTP status; null when none came (no answer in time, a refused address, a network error). */
  readonly statusCode: number | null;
  readonly durationMs: number;
  /** Why it failed, from the server (may carry the receiver's words): shown as text. */
  readonly error: string | null;
}

export interface WebhookDeliveryItem {
  /** The `webhook-id` header, the same on every attempt and replay. */
  readonly id: string;
  readonly type: string;
  readonly status: "pending" | "succeeded" | "failed";
  readonly attemptCount: number;
  /** When it is tried next, while pending. */
  readonly nextAttemptAt: string | null;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly createdAt: string;
  readonly attempts: readonly WebhookAttemptItem[];
}

// ---- Escalations (src/host/escalations, src/renderer/approvals) ----

export interface EscalationItem {
  /** `esc_…`. */
  readonly id: string;
  /** heartbeat, managed_agent, agent_rpc. */
  readonly sourceType: string;
  /** Who asks, in words: "Your heartbeat", "One of your agents", "Your agent, for a contact". */
  readonly sourceWords: string;
  readonly toolName: string;
  /** The server's words for what the agent wants (with its arguments): shown as text. */
  readonly summary: string;
  /** What continuing does. */
  readonly consequence: string;
  readonly createdAt: string;
  /** Left alone until then, it counts as stop. */
  readonly expiresAt: string;
}

export interface EscalationList {
  /** False when the server has no escalation routes (an older server). */
  readonly supported: boolean;
  readonly escalations: readonly EscalationItem[];
  /** Set when the desktop's key lacks the os.tools scopes: why the list is empty, in words. */
  readonly notAllowed?: string;
}

// ---- Managed agents (src/host/agents, src/renderer/agents) ----

export type ToolDecision = "allow" | "ask" | "deny";

export interface ManagedAgentGrantItem {
  readonly notesAccess: {
    readonly scope: "none" | "folders" | "all";
    readonly folderIds: readonly number[];
    readonly access: "read" | "write";
  };
  readonly todoAccess: { readonly read: boolean; readonly create: boolean };
}

/** What the form sets; each may be left out (the server's default, or unchanged). */
export interface ManagedAgentSettings {
  readonly name?: string;
  readonly instructions?: string;
  /** A model alias (default, fast, smart, local) or a configured model id. */
  readonly model?: string;
  /** Tool namespaces: notes, todos. */
  readonly namespaces?: readonly string[];
  readonly grant?: ManagedAgentGrantItem;
  /** Per tool: allow runs it, ask pauses the run for the owner, deny removes it; a tool not named is allowed. */
  readonly toolPolicy?: Readonly<Record<string, ToolDecision>>;
}

export interface ManagedAgentItem {
  readonly id: number;
  /** What `POST /agent/message {to}` and A2A address it by. */
  readonly handle: string;
  readonly name: string;
  readonly description: string;
  readonly instructions: string;
  readonly model: string;
  readonly namespaces: readonly string[];
  readonly grant: ManagedAgentGrantItem;
  readonly toolPolicy: Readonly<Record<string, ToolDecision>>;
  readonly status: "active" | "paused";
  readonly paused: boolean;
  readonly createdAt: string;
}

export interface ManagedAgentToolItem {
  readonly name: string;
  readonly namespace: string;
  readonly readWrite: "read" | "write";
}

export interface ManagedAgentList {
  /** False when the server has no managed-agents routes (an older server). */
  readonly supported: boolean;
  readonly agents: readonly ManagedAgentItem[];
  /** The tools an agent's policy may name (notes and todos). */
  readonly tools: readonly ManagedAgentToolItem[];
  /** The owner's own folders, which a grant may name. */
  readonly folders: readonly { readonly id: number; readonly name: string }[];
  /** Set when the desktop's key lacks the os.agents scopes: why the list is empty, in words. */
  readonly notAllowed?: string;
}

export interface ManagedAgentKeyItem {
  readonly keyId: string;
  readonly label: string | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

export interface ManagedAgentWithKey {
  readonly agent: ManagedAgentItem;
  readonly key: ManagedAgentKeyItem;
  /** `svc_sk_…`: shown this once. */
  readonly apiKey: string;
}

export interface ManagedAgentRunItem {
  readonly id: number;
  /** How it was reached: `runs` (here or its key), `agent_message`, `a2a`. */
  readonly source: string;
  /** Asked by another person's agent (with their permission). */
  readonly fromAnotherPerson: boolean;
  /** running, requires_action (waiting for the owner), completed, failed, stopped. */
  readonly status: string;
  readonly input: string;
  readonly output: string;
  /** The tools it called, in order. */
  readonly toolsUsed: readonly string[];
  readonly totalTokens: number;
  readonly model: string;
  readonly error: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

// ---- The inbox (src/host/inbox, src/renderer/inbox) ----

/** `coo`: conversations with people; `group`: groups; `all`: both (never the personal agent's, which the Agent section shows). */
export type InboxView = "coo" | "group" | "all";

/** The longest message the server takes (core's MAX_AGENT_MESSAGE_CHARS; the host checks they match). */
export const INBOX_MESSAGE_MAX = 4000;

export interface InboxPerson {
  readonly userId: string;
  readonly username: string;
  /** Untrusted (the person chose it): shown as text. */
  readonly name: string;
}

export interface InboxMessage {
  readonly id: number;
  readonly conversationId: number;
  /** `human`: a person wrote it as themself; `agent`: an agent wrote it (on someone's behalf). */
  readonly senderType: "human" | "agent";
  readonly senderId: string | null;
  /** "Alice", "Alice's agent": untrusted, shown as text. */
  readonly senderLabel: string;
  /** Untrusted (another person wrote it): shown as text, never as markup. */
  readonly content: string;
  /** The owner wrote it (from this device or another). */
  readonly mine: boolean;
  readonly createdAt: string;
}

export interface InboxConversation {
  readonly conversationId: number;
  readonly kind: "person" | "group";
  /** The person's name or the group's name: untrusted, shown as text. */
  readonly title: string;
  /** The other person, for a conversation with one. */
  readonly contact: InboxPerson | null;
  /** A group's active members. */
  readonly members: readonly InboxPerson[];
  readonly unreadCount: number;
  /** The newest message's start, one line (untrusted), or null. */
  readonly preview: string | null;
  readonly updatedAt: string;
}

export interface InboxList {
  /** False when the server has no messaging routes (an older server). */
  readonly supported: boolean;
  readonly conversations: readonly InboxConversation[];
  readonly unreadTotal: number;
}

export interface InboxConversationDetail extends InboxConversation {
  readonly messages: readonly InboxMessage[];
}

export interface InboxContactList {
  readonly contacts: readonly InboxPerson[];
  /** Why the contacts cannot be listed (a key without os.network:read), in words; a username can still be typed. */
  readonly notAllowed?: string;
}

/** A message request: someone not connected wrote to the owner; nothing of it is in the inbox until accepted. */
export interface InboxRequest {
  readonly requestId: number;
  /** Untrusted (the sender chose their name): shown as text. */
  readonly from: InboxPerson;
  readonly conversationId: number;
  readonly messageCount: number;
  /** The newest held messages, oldest first: a stranger's words, shown as text and never acted on. */
  readonly messages: readonly { readonly id: number; readonly content: string; readonly createdAt: string }[];
  readonly updatedAt: string;
}

export interface InboxRequestList {
  /** False when the server has no message requests (an older server). */
  readonly supported: boolean;
  readonly requests: readonly InboxRequest[];
}

export type InboxRequestAction = "accept" | "ignore" | "block";

export interface InboxRequestAnswer {
  readonly status: "accepted" | "ignored" | "blocked";
  /** The pair's conversation (in the inbox once accepted). */
  readonly conversationId: number;
  /** What was done, in words. */
  readonly message: string;
}

/** A message that arrived while the app ran (from the server's realtime channel), for the toast and the notification. */
export interface InboxArrival {
  readonly conversationId: number;
  readonly messageId: number;
  readonly kind: "person" | "group";
  /** Who wrote it ("Alice", "Alice's agent"), and in which group: untrusted, shown as text. */
  readonly from: string;
  readonly groupName: string | null;
  /** The message's start, one line; untrusted. */
  readonly preview: string;
  readonly arrivedAt: string;
}

// ---- Usage (src/host/usage, src/renderer/usage) ----

export interface UsageTotalsItem {
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly runs: number;
  readonly toolCalls: number;
  readonly activeDevices: number;
}

export interface UsageGroupItem {
  /** A model id, a source (chat, heartbeat…) or a device id: shown as text. */
  readonly name: string;
  readonly tokensIn: number;
  readonly tokensOut: number;
}

export interface AccountBudgetInput {
  readonly tokensPerMonth: number | null;
  readonly runsPerDay: number | null;
  readonly activeDevices: number | null;
}

/** An API key's or a managed agent's budget (device budgets cap nothing: the server refuses them). */
export interface ScopedBudgetInput {
  readonly scope: "apiKey" | "agent";
  readonly scopeId: string;
  readonly tokensPerMonth: number | null;
  readonly runsPerDay: number | null;
}

export interface ScopedBudgetItem extends ScopedBudgetInput {
  /** The key's label or the agent's handle (the id when neither is known). */
  readonly name: string;
  readonly tokensThisMonth: number;
  readonly runsToday: number;
}

export interface UsageOverview {
  /** False when the server has no metering routes (an older server). */
  readonly supported: boolean;
  readonly month: string;
  readonly total: UsageTotalsItem;
  readonly byModel: readonly UsageGroupItem[];
  readonly bySource: readonly UsageGroupItem[];
  /** Devices active this month (ids as the bridges report them). */
  readonly devices: readonly string[];
  /** The account's budget (nulls: none) and what is spent against it. */
  readonly budget: AccountBudgetInput & { readonly tokensThisMonth: number; readonly runsToday: number };
  /** Budgets of other scopes (API keys, agents), kept as they are when the account's is saved. */
  readonly otherBudgets: number;
  /**
   * The API keys used this month or budgeted, and the managed agents, each with its budget (nulls: none):
   * what the Usage section lets the owner cap one by one.
   */
  readonly scopedBudgets: readonly ScopedBudgetItem[];
  readonly ceilings: AccountBudgetInput;
  readonly invoice: {
    readonly currency: string;
    readonly lines: readonly { readonly description: string; readonly quantity: number; readonly unit: string; readonly amount: number }[];
    readonly total: number;
  };
  /** Why the budgets cannot be changed with this key, in words. */
  readonly notAllowed?: string;
}

// ---- Share links (src/host/share, src/renderer/share) ----

export type ShareLinkExpiry = "1h" | "24h" | "7d" | "30d" | "90d" | "never";

/** What a new link lets its guests' agent reach, and how guests come in. */
export interface ShareLinkInput {
  readonly label: string;
  readonly expiresIn: ShareLinkExpiry;
  /** `read`: the agent may read the owner's notes; `write`: also create and change them. */
  readonly notesAccess: "read" | "write";
  /** The agent may read (never change) the owner's todos. */
  readonly todos: boolean;
  /** Guests must sign in with a Tandem account. */
  readonly requireSignIn: boolean;
  /** Guests see the owner's name (else "the owner"). */
  readonly identity: boolean;
  /** Guests are answered from this computer's coding agent (through the bridge) when it answers in time. */
  readonly localAgent: boolean;
}

export interface ShareLinkItem {
  readonly id: number;
  /** Untrusted only in that the owner typed it: shown as text. */
  readonly label: string;
  /** The guest page, `/a/<token>`, on the server. */
  readonly url: string;
  readonly token: string;
  /** What guests' agent may reach, in words ("Reads your notes", "Reads your todos"…). */
  readonly capabilities: readonly string[];
  readonly requireSignIn: boolean;
  readonly localAgent: boolean;
  readonly active: boolean;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
  readonly createdAt: string;
  readonly visitors: number;
  readonly conversations: number;
  readonly messages: number;
}

export interface ShareLinkList {
  /** False when the server has no share-link routes (an older server). */
  readonly supported: boolean;
  readonly links: readonly ShareLinkItem[];
  /** Why the links cannot be managed with this key (no os.share scopes), in words. */
  readonly notAllowed?: string;
}

export interface GuestConversationItem {
  readonly sessionId: string;
  readonly shareToken: string;
  /** Who visited, on which link: their account when signed in, else their fingerprint (as the server counts visitors). */
  readonly visitorKey: string;
  /** Untrusted (the guest chose their name): shown as text. */
  readonly guest: string;
  readonly linkLabel: string;
  readonly messageCount: number;
  /** The last message's start, one line; untrusted. */
  readonly lastMessage: string | null;
  readonly lastActiveAt: string;
}

export interface GuestTranscript {
  readonly conversation: GuestConversationItem;
  /** The guest's words and the agent's answers: untrusted, shown as text only. */
  readonly messages: readonly { id: number; from: "guest" | "agent"; content: string; createdAt: string }[];
}

/** The server's limits (the host checks they match core's): the checklist's characters, the schedule's interval in minutes. */
export const HEARTBEAT_CHECKLIST_MAX = 10_000;
export const HEARTBEAT_EVERY_MINUTES_MIN = 5;
export const HEARTBEAT_EVERY_MINUTES_MAX = 10_080;

export type DesktopApiMethod = keyof DesktopApi;

/** Listing every method as a record key makes the compiler reject a method added to the API but not here. */
const methodPresence: Record<DesktopApiMethod, true> = {
  getAppInfo: true,
  getSession: true,
  signInWithApiKey: true,
  startSignInPairing: true,
  pollSignInPairing: true,
  signOut: true,
  getLocalSync: true,
  getWorkspaceOutline: true,
  getStatus: true,
  searchNotes: true,
  notePreviews: true,
  listSnapshots: true,
  getSnapshot: true,
  createSnapshot: true,
  restoreSnapshot: true,
  getBridgeStatus: true,
  startBridgePairing: true,
  unpairBridge: true,
  listApprovals: true,
  resolveApproval: true,
  listGrants: true,
  acceptGrant: true,
  declineGrant: true,
  revokeGrant: true,
  listBridgeActivity: true,
  setBridgeGuestAnswering: true,
  listAccessRequests: true,
  answerAccessRequest: true,
  listConversations: true,
  getConversation: true,
  deleteConversation: true,
  startChat: true,
  readChat: true,
  stopChat: true,
  latestBriefing: true,
  createBriefing: true,
  briefingStrategies: true,
  briefingMatrix: true,
  markConversationRead: true,
  getHeartbeat: true,
  saveHeartbeatSettings: true,
  listHeartbeatRuns: true,
  getHeartbeatRun: true,
  runHeartbeat: true,
  getHeartbeatChecklist: true,
  saveHeartbeatChecklist: true,
  listToolNamespaces: true,
  setToolNamespace: true,
  listToolIntegrations: true,
  removeToolIntegration: true,
  listMcpServers: true,
  addMcpServer: true,
  updateMcpServer: true,
  authorizeMcpServer: true,
  refreshMcpServer: true,
  disconnectMcpServer: true,
  removeMcpServer: true,
  listConnectedApps: true,
  revokeConnectedApp: true,
  listWebhooks: true,
  addWebhook: true,
  setWebhookEnabled: true,
  rotateWebhookSecret: true,
  testWebhook: true,
  listWebhookDeliveries: true,
  replayWebhookDelivery: true,
  removeWebhook: true,
  listManagedAgents: true,
  createManagedAgent: true,
  updateManagedAgent: true,
  setManagedAgentPaused: true,
  deleteManagedAgent: true,
  listManagedAgentKeys: true,
  createManagedAgentKey: true,
  revokeManagedAgentKey: true,
  listManagedAgentRuns: true,
  runManagedAgent: true,
  listEscalations: true,
  resolveEscalation: true,
  listInbox: true,
  openInboxConversation: true,
  markInboxRead: true,
  replyInInbox: true,
  sendInboxMessage: true,
  listInboxContacts: true,
  createInboxGroup: true,
  leaveInboxGroup: true,
  listInboxRequests: true,
  answerInboxRequest: true,
  listShareLinks: true,
  createShareLink: true,
  renewShareLink: true,
  revokeShareLink: true,
  listGuestConversations: true,
  getGuestConversation: true,
  getUsage: true,
  saveAccountBudget: true,
  saveScopedBudget: true,
  listDrafts: true,
  saveDraft: true,
  getRawMemory: true,
  enableRawMemory: true,
  confirmRawMemoryRecovery: true,
  recoverRawMemory: true,
  disableRawMemory: true,
  forgetRawMemoryDevice: true,
  searchRawMemory: true,
  setUnsavedWork: true,
  openExternal: true,
};

/** Every method of the API, so each transport wires them all without naming them again. */
export const DESKTOP_API_METHODS = Object.freeze(Object.keys(methodPresence) as DesktopApiMethod[]);

/** The name under which the preload exposes the API on `window`. */
export const DESKTOP_API_GLOBAL = "tandem";
