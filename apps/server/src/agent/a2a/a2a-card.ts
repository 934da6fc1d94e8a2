import type { AgentCard } from "@a2a-js/sdk";
import { A2A_PROTOCOL_VERSION } from "@a2a-js/sdk";
import { A2A_LEGACY_PROTOCOL_VERSION } from "@a2a-js/sdk/compat/v0_3";
import { OAUTH_MOUNT_PATH } from "../../oauth/oauth-paths";
import type { A2AAgent } from "./a2a-agents";

/** The OAuth scope an app needs to message as the person (the same as for `POST /agent/message`). */
const SEND_SCOPE = "agent.message:send";

/**
 * An agent's A2A v1 card. One endpoint answers both protocol versions (v1.0, and v0.3 for
 * `message/send` clients), so the card names it twice. Both security schemes are bearer tokens:
 * a Tandem API key, or an OAuth access token from this server (authorization code with PKCE).
 */
export function agentCardFor(agent: A2AAgent, base: string): AgentCard {
  const url = `${base}/a2a/${agent.handle}`;
  const jsonRpc = (protocolVersion: string) => ({ url, protocolBinding: "JSONRPC", tenant: "", protocolVersion });
  return {
    name: agent.name,
    description: agent.description,
    supportedInterfaces: [jsonRpc(A2A_PROTOCOL_VERSION), jsonRpc(A2A_LEGACY_PROTOCOL_VERSION)],
    provider: { organization: "Tandem", url: base },
    version: "1.0.0",
    documentationUrl: `${base}/api/v1/reference`,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      apiKey: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: { scheme: "Bearer", bearerFormat: "Tandem API key", description: "A Tandem API key of the person asking" },
        },
      },
      oauth: {
        scheme: {
          $case: "oauth2SecurityScheme",
          value: {
            description: "An access token from this Tandem server, allowed to send messages as the person",
            oauth2MetadataUrl: `${base}/.well-known/oauth-authorization-server`,
            flows: {
              flow: {
                $case: "authorizationCode",
                value: {
                  authorizationUrl: `${base}${OAUTH_MOUNT_PATH}/auth`,
                  tokenUrl: `${base}${OAUTH_MOUNT_PATH}/token`,
                  refreshUrl: `${base}${OAUTH_MOUNT_PATH}/token`,
                  scopes: { [SEND_SCOPE]: "Send messages to people and their agents as you" },
                  pkceRequired: true,
                },
              },
            },
          },
        },
      },
    },
    securityRequirements: [{ schemes: { apiKey: { list: [] } } }, { schemes: { oauth: { list: [SEND_SCOPE] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: "ask",
        name: "Ask",
        description: `Ask ${agent.name} a question or for help; it answers within what its owner granted you.`,
        tags: ["tandem", "agent-rpc"],
        examples: ["When is the alpha launch?", "What is on my list for this week?"],
        inputModes: ["text/plain"],
        outputModes: ["text/plain"],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}
