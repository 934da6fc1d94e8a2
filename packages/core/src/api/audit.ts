import { z } from "zod";
import { IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

export const AuditEntry = z.object({
  id: z.number().int(),
  action: z.string().describe("what happened, e.g. network.request.accept, grant.revoke"),
  objectType: z.string(),
  objectId: z.string(),
  actor: z.object({
    userId: z.string().nullable().describe("who did it; null for the server's own timers"),
    username: z.string().optional(),
    credential: z.string().describe("api_key:<keyId>, device:<endpointId>, pairing or system"),
  }),
  parties: z.array(z.string()).describe("the people the change concerns, as user ids"),
  detail: z.record(z.string(), z.unknown()).nullable(),
  createdAt: Timestamp,
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const auditRoutes = {
  listAudit: defineRoute({
    method: "GET",
    path: "/local-agent/audit",
    category: "audit",
    summary: "Recorded changes you took part in (as actor or party), newest first; page with before=nextBefore",
    auth: "any",
    scope: "os.team:read",
    query: z.object({
      limit: z.coerce.number().int().min(1).max(200).default(50),
      before: IdParam.optional().describe("only entries older than this id (the previous page's nextBefore)"),
    }),
    response: success({
      entries: z.array(AuditEntry),
      nextBefore: z.number().int().nullable().describe("pass as before for the next page; null when this was the last"),
    }),
  }),
} as const;
