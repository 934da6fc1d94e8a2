import { TandemApiError } from "@tandem/core";

/**
 * Runs a request for something only the server has (snapshots, note ids, the agent's answers) and
 * turns its failures into messages for the owner: the server's own words when it answered with an
 * error, `offline` (which names what needs the server) when it could not be reached, and a plain
 * "no answer in time" when it was reached but did not answer.
 */
export async function onServer<T>(request: () => Promise<T>, offline: string): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof TandemApiError) {
      throw new Error(typeof error.body.message === "string" ? error.body.message : error.message, { cause: error });
    }
    if ((error as { name?: unknown } | null)?.name === "TimeoutError") {
      throw new Error("The server did not answer in time; try again in a moment", { cause: error });
    }
    throw new Error(offline, { cause: error });
  }
}
