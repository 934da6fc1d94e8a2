import type { DesktopApi } from "../shared/desktop-api";

/** Each part of the host answers a slice of the API; `startHost` joins the slices. */
export type SessionFacet = Pick<DesktopApi, "getSession" | "signInWithApiKey" | "startSignInPairing" | "pollSignInPairing" | "signOut">;
export type SyncFacet = Pick<DesktopApi, "getLocalSync" | "getWorkspaceOutline">;
export type WorkspaceFacet = Pick<
  DesktopApi,
  "searchNotes" | "notePreviews" | "listSnapshots" | "getSnapshot" | "createSnapshot" | "restoreSnapshot"
>;
export type BridgeFacet = Pick<
  DesktopApi,
  | "getBridgeStatus"
  | "startBridgePairing"
  | "unpairBridge"
  | "listApprovals"
  | "resolveApproval"
  | "listGrants"
  | "acceptGrant"
  | "declineGrant"
  | "revokeGrant"
  | "listBridgeActivity"
  | "setBridgeGuestAnswering"
  | "listAccessRequests"
  | "answerAccessRequest"
>;
export type AgentFacet = Pick<
  DesktopApi,
  | "listConversations"
  | "getConversation"
  | "deleteConversation"
  | "startChat"
  | "readChat"
  | "stopChat"
  | "latestBriefing"
  | "createBriefing"
  | "briefingStrategies"
  | "briefingMatrix"
  | "markConversationRead"
  | "getHeartbeat"
  | "saveHeartbeatSettings"
  | "listHeartbeatRuns"
  | "getHeartbeatRun"
  | "runHeartbeat"
  | "getHeartbeatChecklist"
  | "saveHeartbeatChecklist"
>;
export type ConnectionsFacet = Pick<
  DesktopApi,
  | "listToolNamespaces"
  | "setToolNamespace"
  | "listToolIntegrations"
  | "removeToolIntegration"
  | "listMcpServers"
  | "addMcpServer"
  | "updateMcpServer"
  | "authorizeMcpServer"
  | "refreshMcpServer"
  | "disconnectMcpServer"
  | "removeMcpServer"
  | "listConnectedApps"
  | "revokeConnectedApp"
> &
  WebhooksFacet;

/** Webhook endpoints (src/host/connections/webhooks.ts), part of Connections. */
export type WebhooksFacet = Pick<
  DesktopApi,
  | "listWebhooks"
  | "addWebhook"
  | "setWebhookEnabled"
  | "rotateWebhookSecret"
  | "testWebhook"
  | "listWebhookDeliveries"
  | "replayWebhookDelivery"
  | "removeWebhook"
>;

/** The inbox (src/host/inbox): conversations with people and groups. */
export type InboxFacet = Pick<
  DesktopApi,
  | "listInbox"
  | "openInboxConversation"
  | "markInboxRead"
  | "replyInInbox"
  | "sendInboxMessage"
  | "listInboxContacts"
  | "createInboxGroup"
  | "leaveInboxGroup"
  | "listInboxRequests"
  | "answerInboxRequest"
>;

/** Share links (src/host/share): links for guests, their visitors and transcripts. */
export type ShareFacet = Pick<
  DesktopApi,
  "listShareLinks" | "createShareLink" | "renewShareLink" | "revokeShareLink" | "listGuestConversations" | "getGuestConversation"
>;

/** Usage (src/host/usage): the month's meters, the account's budget and the simulated invoice. */
export type UsageFacet = Pick<DesktopApi, "getUsage" | "saveAccountBudget" | "saveScopedBudget">;

/** Unsent messages (src/host/drafts), kept on this computer until sent. */
export type DraftsFacet = Pick<DesktopApi, "listDrafts" | "saveDraft">;

/** Managed agents (src/host/agents): the owner's server-hosted agents, their keys and runs. */
export type ManagedAgentsFacet = Pick<
  DesktopApi,
  | "listManagedAgents"
  | "createManagedAgent"
  | "updateManagedAgent"
  | "setManagedAgentPaused"
  | "deleteManagedAgent"
  | "listManagedAgentKeys"
  | "createManagedAgentKey"
  | "revokeManagedAgentKey"
  | "listManagedAgentRuns"
  | "runManagedAgent"
>;

export type RawMemoryFacet = Pick<
  DesktopApi,
  | "getRawMemory"
  | "enableRawMemory"
  | "confirmRawMemoryRecovery"
  | "recoverRawMemory"
  | "disableRawMemory"
  | "forgetRawMemoryDevice"
  | "searchRawMemory"
>;
