import { z } from "zod";

/**
 * The `message.dispatch` envelope (docs/delegation/grants.md "Messages"). Parsed loosely: fields
 * the bridge does not use may be added by the server without breaking it.
 */
export const DispatchEnvelope = z.looseObject({
  id: z.string().min(1),
  clientMessageId: z.string().nullish(),
  communicationSessionId: z.string().min(1),
  senderPrincipalId: z.string().min(1),
  senderDeviceId: z.string().nullish(),
  target: z.looseObject({
    kind: z.string(),
    principalId: z.string().nullish(),
    endpointId: z.string().min(1),
    sessionHandle: z.string().nullish(),
  }),
  kind: z.string(),
  payload: z.unknown(),
  replyTo: z.string().nullish(),
  correlationId: z.string().nullish(),
  sequence: z.number().nullish(),
  createdAt: z.string().nullish(),
  expiresAt: z.string().nullish(),
});
export type DispatchEnvelope = z.infer<typeof DispatchEnvelope>;

export const DispatchData = z.looseObject({ envelope: DispatchEnvelope, deliveryId: z.string().min(1) });

/** A message whose envelope says it is a reply travelling back to us, not work for the runtime. */
export const REPLY_TARGET_KIND = "reply_route";

/** Message kinds that carry a request for the runtime (the only kinds the server accepts). */
export const RUNNABLE_KINDS: ReadonlySet<string> = new Set(["text", "task_invite", "resource_request"]);
