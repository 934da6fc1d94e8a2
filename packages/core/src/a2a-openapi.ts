// The A2A routes in the OpenAPI document. They live outside `/api/v1` (A2A has its own JSON-RPC wire,
// like `/mcp`), so each path names its own server: the server's root. Their bodies are the A2A
// protocol's (v1.0, and v0.3 on the same endpoint), described here only as far as Tandem adds to them.

type JsonSchema = Record<string, unknown>;

const HANDLE = {
  name: "handle",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "the agent's handle: <username>_coo for a person's agent",
};

const RPC_ERROR: JsonSchema = {
  type: "object",
  required: ["jsonrpc", "id", "error"],
  properties: {
    jsonrpc: { const: "2.0" },
    id: { type: ["string", "number", "null"] },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: {
          type: "integer",
          description: "-32700 unparsable JSON, -32601 unknown method, -32602 bad params, -32000 Tandem's refusals",
        },
        message: { type: "string" },
        data: {
          type: "object",
          properties: { error: { type: "string", description: "Tandem's error code, e.g. agent_permission_required" } },
        },
      },
    },
  },
};

const rpcError = (description: string): JsonSchema => ({ description, content: { "application/json": { schema: RPC_ERROR } } });

const AGENT_CARD: JsonSchema = {
  type: "object",
  description: "An A2A v1.0 agent card (https://a2a-protocol.org/v1.0.0/specification/#441-agentcard)",
  required: ["name", "description", "supportedInterfaces", "version", "capabilities", "securitySchemes", "skills"],
  properties: {
    name: { type: "string" },
    description: { type: "string" },
    supportedInterfaces: {
      type: "array",
      description: "POST /a2a/{handle} over JSON-RPC, once per protocol version (1.0 and 0.3)",
      items: {
        type: "object",
        properties: { url: { type: "string" }, protocolBinding: { const: "JSONRPC" }, protocolVersion: { type: "string" } },
      },
    },
    version: { type: "string" },
    capabilities: { type: "object", properties: { streaming: { const: true }, pushNotifications: { const: false } } },
    securitySchemes: {
      type: "object",
      description: "apiKey (HTTP bearer: a Tandem API key) and oauth (authorization code with PKCE, scope agent.message:send)",
    },
    securityRequirements: { type: "array", items: { type: "object" } },
    skills: { type: "array", items: { type: "object" } },
  },
};

const SECURITY = [{ bearer: [] }, { apiKeyHeader: [] }];

/** The A2A paths, each with its own server (`rootUrl`: the server's origin, or `/`). */
export function a2aOpenApiPaths(rootUrl: string): Record<string, JsonSchema> {
  const servers = [{ url: rootUrl }];
  return {
    "/a2a": {
      servers,
      get: {
        operationId: "a2aListAgents",
        summary: "The A2A agent cards the caller may reach: the agents of people who granted the caller's agent access",
        tags: ["a2a"],
        parameters: [],
        security: SECURITY,
        "x-credential": "user",
        responses: {
          "200": {
            description: "Success",
            content: {
              "application/json": {
                schema: { type: "object", properties: { success: { const: true }, agents: { type: "array", items: AGENT_CARD } } },
              },
            },
          },
          "401": rpcError("Missing or invalid credential"),
        },
      },
    },
    "/a2a/{handle}/.well-known/agent-card.json": {
      servers,
      get: {
        operationId: "a2aAgentCard",
        summary: "An agent's A2A v1 card: no credential needed; it names the endpoint and the security schemes (bearer API key, OAuth)",
        tags: ["a2a"],
        parameters: [HANDLE],
        security: [],
        "x-credential": "public",
        responses: {
          "200": { description: "Success", content: { "application/json": { schema: AGENT_CARD } } },
          "404": rpcError("No such agent"),
        },
      },
    },
    "/a2a/{handle}": {
      servers,
      post: {
        operationId: "a2aJsonRpc",
        summary:
          "A2A JSON-RPC for the agent: SendMessage / message/send and SendStreamingMessage / message/stream (an event stream), answered like POST /agent/message {to: handle} under the owner's grant",
        tags: ["a2a"],
        parameters: [HANDLE],
        security: SECURITY,
        "x-credential": "user",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["jsonrpc", "method"],
                properties: {
                  jsonrpc: { const: "2.0" },
                  id: { type: ["string", "number", "null"] },
                  method: { type: "string", examples: ["SendMessage", "SendStreamingMessage", "message/send", "message/stream"] },
                  params: { type: "object", description: "the A2A request (a message with text parts)" },
                },
              },
            },
          },
        },
        responses: {
          "200": {
            description:
              "A JSON-RPC response: the agent's Message; a Task in a final state (rejected, failed, canceled) when the run was refused or stopped, with the reason in its status message and metadata.error; or a JSON-RPC error. SendStreamingMessage answers text/event-stream.",
            content: { "application/json": { schema: { type: "object" } }, "text/event-stream": { schema: { type: "object" } } },
          },
          "400": rpcError("Unparsable JSON (-32700)"),
          "401": rpcError("Missing or invalid credential"),
          "403": rpcError("The agent's owner has not granted the caller access (agent_permission_required); nothing runs"),
          "404": rpcError("No such agent (agent_not_found)"),
          "413": rpcError("Body larger than 1 MiB"),
          "429": rpcError("Rate limit, or too many agent RPCs in flight; see Retry-After"),
        },
      },
    },
  };
}
