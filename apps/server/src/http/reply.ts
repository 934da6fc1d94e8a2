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
