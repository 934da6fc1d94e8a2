import type { ToolIntegration, ToolNamespace } from "@tandem/core";
import { z } from "zod";
import type { IntegrationItem, ToolNamespaceItem } from "../../shared/desktop-api";
import type { ConnectionsFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import { statusWords } from "./connection-status";
import { connectionsCall } from "./connections-call";

// Core's bounds for a namespace name and an integration id: the server refuses longer ones in its words.
const NamespaceInput = z.object({ namespace: z.string().min(1).max(200), enabled: z.boolean() });
const IdInput = z.object({ id: z.string().min(1).max(200) });

export function namespaceItem(namespace: z.input<typeof ToolNamespace>): ToolNamespaceItem {
  return { namespace: namespace.namespace, sources: namespace.sources, toolCount: namespace.toolCount, enabled: namespace.enabled };
}

/** An integration as the view shows it; `error` is read when the server sends it (newer servers do). */
export function integrationItem(integration: z.input<typeof ToolIntegration> & { error?: string | null }): IntegrationItem {
  return {
    id: integration.id,
    name: integration.name,
    kind: integration.kind,
    state: statusWords(integration.status, integration.error),
    toolCount: integration.toolCount,
  };
}

/** Tool namespaces on and off, and the integrations' health list: routes every server has. */
export function createToolNamespaceMethods(
  session: SessionService,
): Pick<ConnectionsFacet, "listToolNamespaces" | "setToolNamespace" | "listToolIntegrations" | "removeToolIntegration"> {
  const signedIn = () => {
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  return {
    async listToolNamespaces() {
      const client = signedIn();
      const { namespaces } = await connectionsCall(() => client.call("getToolNamespaces"));
      return namespaces.map(namespaceItem);
    },

    async setToolNamespace(input) {
      const { namespace, enabled } = parseInput("setToolNamespace", NamespaceInput, input);
      const client = signedIn();
      const body = enabled ? { enable: [namespace] } : { disable: [namespace] };
      const { namespaces } = await connectionsCall(() => client.call("setToolNamespaces", { body }));
      return namespaces.map(namespaceItem);
    },

    async listToolIntegrations() {
      const client = signedIn();
      const { integrations } = await connectionsCall(() => client.call("listToolIntegrations"));
      return integrations.map(integrationItem);
    },

    async removeToolIntegration(input) {
      const { id } = parseInput("removeToolIntegration", IdInput, input);
      const client = signedIn();
      await connectionsCall(() => client.call("deleteToolIntegration", { params: { id } }));
    },
  };
}
