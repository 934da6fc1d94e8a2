import type { ConnectionsFacet } from "../facets";
import type { SessionService } from "../host-context";
import { createConnectedAppMethods } from "./connected-apps";
import { createMcpServerMethods } from "./mcp-servers";
import { createToolNamespaceMethods } from "./tool-namespaces";
import { createWebhookMethods } from "./webhooks";

/** The Connections section's server calls: tool namespaces, integrations, remote tool servers, connected apps, webhooks. */
export function createConnectionsFacet(session: SessionService): ConnectionsFacet {
  return {
    ...createToolNamespaceMethods(session),
    ...createMcpServerMethods(session),
    ...createConnectedAppMethods(session),
    ...createWebhookMethods(session),
  };
}
