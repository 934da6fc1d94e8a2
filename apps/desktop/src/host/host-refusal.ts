/**
 * A host method declining what it was asked, with a sentence for the person: a bad argument, a
 * sign-in the server refused or could not be asked about. Web mode answers it with a 4xx (the
 * request was wrong, not the host); anything else a method throws is a fault of the host, a 500.
 * Over IPC it is an ordinary Error, so the renderer reads both transports alike.
 */
export class HostRefusal extends Error {
  constructor(
    message: string,
    /** 400: the arguments were wrong; 409: not now (the state does not allow it); 422: tried, and it cannot be done. */
    readonly status: 400 | 409 | 422 = 422,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** `error` as a refusal with its own sentence, for steps whose every failure is one (asking the server about a key). */
export function asRefusal(error: unknown): HostRefusal {
  if (error instanceof HostRefusal) return error;
  return new HostRefusal(error instanceof Error ? error.message : String(error), 422, { cause: error });
}
