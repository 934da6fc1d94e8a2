import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { API_BASE_PATH } from "@tandem/core";
import express from "express";
import { a2aRouter } from "./agent/a2a/a2a-route";
import { briefingHandlers } from "./agent/briefing/briefing-routes";
import { modelBriefingWriter } from "./agent/briefing/model-writer";
import { chatHandlers } from "./agent/chat/chat-routes";
import { conversationHandlers } from "./agent/conversations/conversation-routes";
import { escalationHandlers } from "./agent/escalations/escalation-routes";
import { registerEscalationSource, stopEscalations } from "./agent/escalations/escalations";
import { heartbeatHandlers } from "./agent/heartbeat/heartbeat-routes";
import { heartbeatEscalations } from "./agent/heartbeat/heartbeat-run";
import { Heartbeats } from "./agent/heartbeat/heartbeat-service";
import { managedAgentHandlers } from "./agent/managed-agents/managed-agent-routes";
import { managedAgentEscalations } from "./agent/managed-agents/managed-agent-run";
import { mcpRouter } from "./agent/mcp-server/mcp-route";
import { LocalModel } from "./agent/models/local/local-model";
import { assertModelConfig, ModelCatalog } from "./agent/models/model-catalog";
import { rawMemoryHandlers } from "./agent/raw-memory/raw-memory-routes";
import { mcpCallbackFormRouter, mcpHandlers } from "./agent/tools/mcp/mcp-routes";
import { toolsHandlers } from "./agent/tools/tools-routes";
import { meteringHandlers } from "./agent/usage/metering-routes";
import { recordModelCall } from "./agent/usage/meters";
import { agentUsageHandlers } from "./agent/usage/usage-routes";
import { auditHandlers } from "./audit/audit-routes";
import { ApiKeyVerifier } from "./auth/api-keys";
import { Authenticator } from "./auth/authenticator";
import { Clock } from "./clock";
import type { ServerConfig } from "./config";
import type { AppContext } from "./context";
import { SecretBox } from "./crypto/secret-box";
import { openDatabase } from "./db/database";
import { approvalHandlers } from "./delegation/approvals/approvals-routes";
import { delegationHandlers } from "./delegation/delegations/delegations-routes";
import { grantHandlers } from "./delegation/grants/grants-routes";
import { RealtimeLog } from "./delegation/realtime/event-log";
import { realtimeHandlers } from "./delegation/realtime/realtime-routes";
import { StreamWakeups } from "./delegation/realtime/stream-wakeups";
import { DeviceTokenVerifier } from "./delegation/runtime/device-tokens";
import { runtimeHandlers } from "./delegation/runtime/runtime-routes";
import { accessLog } from "./http/access-log";
import { errorHandler, notFoundHandler } from "./http/error-handler";
import { buildApi } from "./http/router";
import { createLogger, type Logger } from "./logger";
import { Maintenance } from "./maintenance";
import { accountHandlers } from "./oauth/account-routes";
import { OAuthServer } from "./oauth/oauth-routes";
import { agentRpcEscalations } from "./people/messaging/agent-message";
import { messagingHandlers } from "./people/messaging/messaging-routes";
import { networkHandlers } from "./people/network/network-routes";
import { guestRouter } from "./people/share/guest-routes";
import { ShareGuard } from "./people/share/share-guard";
import { shareHandlers } from "./people/share/share-routes";
import { sharingHandlers } from "./people/sharing/sharing-routes";
import { teamHandlers } from "./people/team/team-routes";
import { followAccessChanges } from "./shared/access-changes";
import { openSharedState } from "./shared/shared-state";
import { syncHandlers } from "./sync/sync-routes";
import { createRedisRelay, SYNC_PATH, SyncServer } from "./sync/sync-server";
import { YJS_PATH, YjsEndpoint } from "./sync/yjs-endpoint";
import { renderHomePage } from "./system/home-page";
import { InstanceLease } from "./system/instance-lease";
import { systemHandlers } from "./system/system-routes";
import { wireWebhookEvents } from "./webhooks/webhook-events";
import { webhookPruneTask } from "./webhooks/webhook-prune";
import { webhookHandlers } from "./webhooks/webhook-routes";
import { WebhookWorker } from "./webhooks/webhook-worker";
import { accumulateHandlers } from "./workspace/accumulate/accumulate-routes";
import { folderHandlers } from "./workspace/folders/folders-routes";
import { noteHandlers } from "./workspace/notes/notes-routes";
import { createEmbedder } from "./workspace/search/embedder";
import { EmbeddingIndexer } from "./workspace/search/embedding-indexer";
import { snapshotHandlers } from "./workspace/snapshots/snapshots-routes";
import { todoHandlers } from "./workspace/todos/todos-routes";
import { trashHandlers } from "./workspace/trash/trash-routes";
import { workspaceHandlers } from "./workspace/workspace-routes";

export interface RunningServer {
  /** `http://host:port` */
  readonly url: string;
  /** `http://host:port/api/v1` */
  readonly apiUrl: string;
  /** `ws://host:port/sync` */
  readonly syncUrl: string;
  /** `ws://host:port/yjs`: a y-websocket provider's `serverUrl` */
  readonly yjsUrl: string;
  readonly port: number;
  readonly context: AppContext;
  /** Stops accepting, lets requests in flight finish, stores documents, closes storage. */
  close(): Promise<void>;
}

function buildApp(context: AppContext, sync: SyncServer, heartbeats: Heartbeats, oauth: OAuthServer): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(accessLog(context.logger, context.config.accessLog));
  // Share links' public face (guestRouter) and their v1 routes redeem tokens through one guard, so its limits are shared.
  const shareGuard = new ShareGuard(context);
  const api = buildApi(API_BASE_PATH, context.authenticator, {
    ...workspaceHandlers(context),
    ...folderHandlers(context),
    ...noteHandlers(context),
    ...trashHandlers(context),
    ...snapshotHandlers(context),
    ...accumulateHandlers(context),
    ...sharingHandlers(context),
    ...todoHandlers(context),
    ...systemHandlers(),
    ...networkHandlers(context),
    ...runtimeHandlers(context),
    ...grantHandlers(context),
    ...approvalHandlers(context),
    ...delegationHandlers(context),
    ...realtimeHandlers(context),
    ...auditHandlers(context),
    ...chatHandlers(context),
    ...conversationHandlers(context),
    ...agentUsageHandlers(context),
    ...syncHandlers(context),
    ...briefingHandlers(context, {
      onUsage: async ({ userId, apiKeyId, ...call }) => {
        await recordModelCall(context, { userId, apiKeyId }, { ...call, source: "briefing" });
      },
      // The local provider's briefing is the rule-based one; a remote model writes the prose.
      writer: context.config.modelProvider === "local" ? undefined : modelBriefingWriter(context.models),
    }),
    ...heartbeatHandlers(context, heartbeats),
    ...toolsHandlers(context),
    ...messagingHandlers(context),
    ...shareHandlers(context, shareGuard),
    ...teamHandlers(context),
    ...accountHandlers(context),
    ...mcpHandlers(context),
    ...webhookHandlers(context),
    ...escalationHandlers(context),
    ...managedAgentHandlers(context),
    ...rawMemoryHandlers(context),
    ...meteringHandlers(context),
  });
  // First, so a request naming a route exactly (most API calls) goes straight to it without
  // trying every route below: none of those is under the API's base path but the confirmation
  // form's POST, which is not in the route table (mcpCallbackFormRouter checks that).
  app.use(api.exactRoutes);
  app.get("/healthz", (_req, res) => {
    res.json({ success: true, status: "ok", documentsOpen: sync.hocuspocus.getDocumentsCount() });
  });
  // The remote tool servers' OAuth confirmation form (an HTML form post, not JSON): a POST to a
  // path whose GET is in the route table, so it goes before the API's router.
  app.use(mcpCallbackFormRouter(context));
  // The root page (or the first-run form), sign-in, OAuth metadata and the authorization server under /oauth.
  app.use(
    oauth.routes((_req, res) => {
      const page = renderHomePage({ documentsOpen: sync.hocuspocus.getDocumentsCount() });
      res.status(200).set(page.headers).send(page.html);
    }),
  );
  // Share links' public face: the page /a/<token> and the JSON guest chat, outside /api/v1 as clients call it.
  app.use(guestRouter(context, shareGuard));
  app.use(API_BASE_PATH, api.router);
  // Tandem as an MCP server, outside the v1 API: its own wire (JSON-RPC) and its own metadata.
  app.use(mcpRouter(context));
  // A2A for Tandem's agents, outside the v1 API too: its JSON-RPC wire and its agent cards.
  app.use(a2aRouter(context));
  app.use(notFoundHandler);
  app.use(errorHandler(context.logger));
  return app;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** Opens storage, builds the API and the sync hub, and listens on one port. */
export async function startServer(config: ServerConfig, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  // A provider without what it needs stops the start before any storage is created.
  assertModelConfig(config);
  const database = await openDatabase(config);
  // Before anything serves: an instance that cannot run beside another on this database stops here.
  const lease = await InstanceLease.acquire(database.db, config, logger).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  const shared = await openSharedState(config, logger);
  const authenticator = new Authenticator(
    shared.limiter("requests", { perMinute: config.rateLimitPerMinute, burst: config.rateLimitBurst }),
    shared.limiter("auth-failures", { perMinute: config.authFailuresPerMinute, burst: config.authFailureBurst }),
  );
  authenticator.addVerifier(new ApiKeyVerifier(database.db, database.reads, database.readsNow));
  authenticator.addVerifier(new DeviceTokenVerifier(database.db));
  const base = { config, logger, database, db: database.db, authenticator, shared };
  const sync = new SyncServer(base, await createRedisRelay(base));
  await sync.start();
  const clock = new Clock();
  const embedder = await createEmbedder(config, logger);
  const context: AppContext = {
    ...base,
    sync,
    clock,
    realtime: new RealtimeLog(clock, shared.kind === "redis" ? new StreamWakeups(shared) : undefined),
    maintenance: new Maintenance(config.maintenanceIntervalMs, logger),
    models: new ModelCatalog(config, () => new LocalModel()),
    embedder,
    secrets: await SecretBox.load({ secretKey: config.secretKey, dataDir: config.dataDir }),
  };
  // Note embeddings follow the views in the background: a changed note, title or body, is re-embedded.
  const indexer = embedder && new EmbeddingIndexer(database.db, embedder, logger);
  if (indexer) sync.views.onUpdated(() => indexer.schedule());
  const heartbeats = new Heartbeats(context);
  // Runs a crashed server left `running` are closed before anything else can look at them.
  await heartbeats.closeAbandonedRuns();
  context.maintenance.add("heartbeat.schedule", () => heartbeats.tick());
  // Other instances' revocations reach this one's sync connections and streams at once.
  const unfollowAccess = followAccessChanges(shared, { connections: sync.connections, realtime: context.realtime, logger });
  wireWebhookEvents(context);
  registerEscalationSource(heartbeatEscalations);
  registerEscalationSource(agentRpcEscalations);
  registerEscalationSource(managedAgentEscalations);
  const webhooks = new WebhookWorker(context);
  context.maintenance.add("webhooks.prune", webhookPruneTask(context));
  const oauth = await OAuthServer.create(context);
  const app = buildApp(context, sync, heartbeats, oauth);
  const server = createServer(app);
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (request, socket, head) => {
    const { pathname } = new URL(request.url ?? "/", "http://localhost");
    if (pathname === SYNC_PATH) {
      sync.handleUpgrade(request, socket, head);
    } else if (YjsEndpoint.claims(pathname)) {
      sync.yjs.handleUpgrade(request, socket, head);
    } else {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    }
  });
  // A client that sends garbage gets a 400 and its socket closed; the server carries on.
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    else socket.destroy();
  });

  let address: AddressInfo;
  try {
    address = await listen(server, config.port, config.host);
  } catch (error) {
    await context.realtime.wakeups?.close();
    await shared.close();
    await lease.release();
    await database.close();
    throw error;
  }
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  // Before the first request can arrive: the issuer may be the address just bound.
  oauth.start(url);
  context.maintenance.start();
  webhooks.start();
  indexer?.schedule();
  logger.info({ url, storage: database.dialect, location: database.location }, "tandem server listening");

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      logger.info("shutting down");
      // Open event streams would hold server.close() until they recycle: end them first.
      context.realtime.endAllStreams();
      await context.realtime.wakeups?.close();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Heartbeat runs going are ended (and recorded) first: the scheduler's task waits for them.
      await heartbeats.stop();
      await stopEscalations(context);
      await webhooks.stop();
      await context.maintenance.stop();
      await sync.close();
      await indexer?.stop();
      const grace = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, config.shutdownGraceMs);
      grace.unref();
      await stopped;
      clearTimeout(grace);
      unfollowAccess();
      await shared.close();
      await lease.release();
      await database.close();
      logger.info("stopped");
    })();
    return closing;
  };

  return {
    url,
    apiUrl: `${url}${API_BASE_PATH}`,
    syncUrl: `ws://${host}:${address.port}${SYNC_PATH}`,
    yjsUrl: `ws://${host}:${address.port}${YJS_PATH}`,
    port: address.port,
    context,
    close,
  };
}
