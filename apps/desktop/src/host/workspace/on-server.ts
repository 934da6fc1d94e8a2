import { TandemApiError } from "@tandem/core";

/**
 * Runs a request for something only the server has (snapshots, note ids) and turns its failures
 * into messages for the owner: the server's own words when it answered with an error, and a plain
 * "offline" when it could not be reached.
 */
export async function onServer<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof TandemApiError) {
      throw new Error(typeof error.body.message === "string" ? error.body.message : error.message, { cause: error });
    }
    throw new Error("Snapshots are kept on the server, which cannot be reached right now; try again once you are back online", {
      cause: error,
    });
  }
}
