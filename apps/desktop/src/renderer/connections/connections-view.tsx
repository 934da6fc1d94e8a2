import type { DesktopApi } from "../../shared/desktop-api";
import { useHostStatus } from "../layout/host-status";
import { ConnectedAppsPanel } from "./connected-apps-panel";
import { IntegrationsPanel } from "./integrations-panel";
import { McpServersPanel } from "./mcp-servers-panel";
import { NamespacesPanel } from "./namespaces-panel";
import { WebhooksPanel } from "./webhooks-panel";
import "./connections.css";

/**
 * The Connections section: what the agent's tools reach and who reaches the account. Tool
 * namespaces on and off; remote tool servers (MCP) with their sign-in; integrations; apps let in
 * through OAuth, with a way to disconnect each; webhooks that push events to the owner's own addresses. All of it is kept on the server, so every panel
 * says so while the server is out of reach and keeps what it last showed.
 */
export function ConnectionsView({ api }: { api: DesktopApi }) {
  const offline = useHostStatus().status?.sync.state === "offline";
  return (
    <div className="connections-view">
      <p className="hint connections-intro">
        What your agent's tools can reach, and which apps can reach your account. Changes apply at once, on every device.
      </p>
      {offline && (
        <p className="connections-offline" role="status">
          Connections are kept on the server, which can't be reached right now. What you see is how things stood; changes wait until it is
          back.
        </p>
      )}
      <div className="connections-columns">
        <div className="connections-column">
          <NamespacesPanel api={api} offline={offline} />
          <IntegrationsPanel api={api} offline={offline} />
        </div>
        <div className="connections-column">
          <McpServersPanel api={api} offline={offline} />
          <ConnectedAppsPanel api={api} offline={offline} />
        </div>
      </div>
      <WebhooksPanel api={api} offline={offline} />
    </div>
  );
}
