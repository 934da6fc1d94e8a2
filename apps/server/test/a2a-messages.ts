// The A2A SDK's message shapes, as the tests send and read them.
import { randomUUID } from "node:crypto";
import { type Message, Role } from "@a2a-js/sdk";

/** A user's text message, as `sendMessage` and `sendMessageStream` take it. */
export function userMessage(text: string) {
  return {
    tenant: "",
    message: {
      messageId: randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{ content: { $case: "text" as const, value: text }, mediaType: "text/plain", filename: "", metadata: undefined }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

/** The text parts of an agent message, joined. */
export function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");
}
