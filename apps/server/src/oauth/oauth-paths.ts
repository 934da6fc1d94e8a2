import { API_BASE_PATH } from "@tandem/core";
import { MCP_PATH } from "../agent/mcp-server/mcp-route";

/** Where the authorization server's endpoints live (`/oauth/auth`, `/oauth/token`, …). */
export const OAUTH_MOUNT_PATH = "/oauth";

/** The resources an access token may be minted for: the v1 API (the default) and the MCP endpoint. */
export function resourcesOf(issuer: string): { api: string; mcp: string } {
  return { api: `${issuer}${API_BASE_PATH}`, mcp: `${issuer}${MCP_PATH}` };
}
