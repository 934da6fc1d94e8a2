/** A handler's answer when it is not a plain 200 JSON body. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly contentType: "json" | "html" = "json",
  ) {}
}

export const created = (body: unknown) => new Reply(201, body);
export const html = (body: string) => new Reply(200, body, "html");

/**
 * A 200 JSON body that is serialised already and goes out as it is: for bodies the database
 * writes as JSON text, where parsing only to serialise again would cost more than the rest of
 * the request. The text must be exactly what `JSON.stringify` makes of the value it stands for,
 * so clients cannot tell the difference.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** `{ ...fields, [key]: value }` as {@link JsonText}, where `valueJson` is `value` serialised already (`fields` must not hold `key`). */
export function jsonWithField(fields: Readonly<Record<string, unknown>>, key: string, valueJson: string): JsonText {
  const head = JSON.stringify(fields).slice(0, -1);
  return new JsonText(`${head}${head === "{" ? "" : ","}${JSON.stringify(key)}:${valueJson}}`);
}
