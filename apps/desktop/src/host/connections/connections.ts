import type { ConnectionsFacet } from "../facets";
import type { SessionService } from "../host-context";
import { createConnectedAppMethods } from "./connected-apps";
import { createMcpServerMethods } from "./mcp-servers";
import { createToolNamespaceMethods } from "./tool-namespaces";

/** The Connections section's server calls: tool namespaces, integrations, remote tool servers, connected apps. */
export function createConnectionsFacet(session: SessionService): ConnectionsFacet {
  return {
    ...createToolNamespaceMethods(session),
    ...createMcpServerMethods(session),
    ...createConnectedAppMethods(session),
  };
}
