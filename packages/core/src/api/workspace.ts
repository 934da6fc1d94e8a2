import { z } from "zod";
import { success, Timestamp } from "./common";
import { Folder } from "./folders";
import { defineRoute } from "./route";

export const WorkspaceSummary = z.object({
  folders: z.array(Folder),
  totalFiles: z.number().int(),
  totalSizeBytes: z.number().int(),
});

/** The person as existing clients (agent skills) read it from `GET /identity`, under `profile` and `identity`. */
const IdentityPerson = z.object({
  userId: z.number().int(),
  username: z.string(),
  name: z.string().nullable(),
  email: z.string().nullable(),
});

export const workspaceRoutes = {
  init: defineRoute({
    method: "POST",
    path: "/init",
    category: "workspace",
    summary: "Initialise the caller's workspace; idempotent, ensures the General folder exists",
    auth: "user",
    scope: "os.notes:write",
    body: z.object({}).optional(),
    response: success({
      initialized: z.boolean().describe("always true: the workspace is ready"),
      created: z.boolean().describe("true when this call created the General folder"),
      workspace: WorkspaceSummary,
      sync: z
        .object({
          url: z.string().describe("the WebSocket URL of the sync hub"),
          workspaceDoc: z.string().describe("the caller's workspace document"),
          todosDoc: z.string().describe("the caller's todos document"),
        })
        .describe("where a sync client connects (docs/sync.md)"),
    }),
  }),
  identity: defineRoute({
    method: "GET",
    path: "/identity",
    category: "workspace",
    summary: "The user and credential behind the request",
    auth: "any",
    response: success({
      userId: z.number().int(),
      principalId: z.string().describe("the user id as a string, as runtime objects name people"),
      username: z.string(),
      name: z.string().nullable(),
      email: z.string().nullable(),
      createdAt: Timestamp,
      profile: IdentityPerson.describe("the same person again, as existing clients read it"),
      identity: IdentityPerson.describe("the same as profile"),
      credential: z.object({
        type: z.enum(["api_key", "oauth_token", "device_token"]),
        id: z.string().describe("the key's id; an OAuth token's grant; a device token's endpoint"),
        label: z.string().nullable().describe("the key's label; the app's name for an OAuth token"),
        scopes: z.array(z.string()).describe("what the credential may do (a device token: none, only its bridge routes)"),
        app: z
          .object({ clientId: z.string(), name: z.string().nullable() })
          .nullable()
          .describe("the connected app an OAuth token was given to; null for other credentials"),
      }),
    }),
  }),
  discovery: defineRoute({
    method: "GET",
    path: "/os",
    category: "workspace",
    summary: "Every operation of this server, grouped by category",
    auth: "any",
    response: success({
      description: z.string(),
      totalEndpoints: z.number().int(),
      byCategory: z.record(z.string(), z.array(z.object({ method: z.string(), path: z.string(), summary: z.string() }))),
    }),
  }),
  status: defineRoute({
    method: "GET",
    path: "/os/status",
    category: "workspace",
    summary: "Counts and sizes of the caller's workspace",
    auth: "user",
    scope: "os.notes:read",
    response: success({
      contextCount: z.number().int().describe("number of notes"),
      totalSizeBytes: z.number().int(),
      folders: z.array(Folder),
      lastSyncedAt: Timestamp.nullable(),
    }),
  }),
} as const;
