import { TandemApiError } from "@tandem/core";
import type { PairingPrompt } from "../../shared/desktop-api";
import { serverClient, serverMessage, unreachableError } from "./server-client";

/** A device-code sign-in in progress: the poll token is its only credential, kept in memory. */
export interface SignInCode {
  readonly serverUrl: string;
  readonly pollToken: string;
  readonly prompt: PairingPrompt;
}

export type SignInCodeResult =
  | { readonly status: "pending" | "denied" | "expired" }
  | { readonly status: "approved"; readonly apiKey: string };

/** Device-code routes are public: the client sends `Bearer anonymous`. */
const ANONYMOUS = "anonymous";

/** Calls a public route, turning "no answer", "error answer" and "not what a Tandem server answers" into sentences. */
async function call<T>(what: string, serverUrl: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof TandemApiError) {
      const detail = serverMessage(error.body);
      throw new Error(`${what} failed: the server answered ${error.status}${detail ? ` (${detail})` : ""}`, { cause: error });
    }
    if (error instanceof TypeError || (error as { name?: unknown }).name === "TimeoutError") throw unreachableError(serverUrl, error);
    throw new Error(`${what} failed: ${serverUrl} does not answer like a Tandem server`, { cause: error });
  }
}

/**
 * Starts device-code sign-in (`POST /local-agent/device-code/start`, purpose `sign_in`): the
 * owner approves the code in a browser, and the approval issues an API key for this app instead
 * of a bridge's device token.
 */
export async function startSignInCode(serverUrl: string, deviceId: string): Promise<SignInCode> {
  const client = serverClient(serverUrl, ANONYMOUS, true);
  const started = await call("Starting sign-in by code", serverUrl, () =>
    client.call("startDeviceCode", { body: { deviceId, runtime: "claude-code", label: "Tandem desktop sign-in", purpose: "sign_in" } }),
  );
  const { userCode, approvalUrl, expiresAt, pollToken } = started;
  return { serverUrl, pollToken, prompt: { userCode, approvalUrl, expiresAt } };
}

/** One poll (`POST /local-agent/device-code/poll`); `consumed` (answered before) reads as expired. */
export async function pollSignInCode(code: SignInCode): Promise<SignInCodeResult> {
  const client = serverClient(code.serverUrl, ANONYMOUS, true);
  const polled = await call("Checking the sign-in code", code.serverUrl, () =>
    client.call("pollDeviceCode", { body: { pollToken: code.pollToken } }),
  );
  const { status, apiKey } = polled;
  if (status === "pending" || status === "denied" || status === "expired") return { status };
  if (status === "consumed") return { status: "expired" };
  if (!apiKey) {
    throw new Error(
      "The code was approved, but the server sent no API key: it does not support signing in by code (update the server, or sign in with an API key)",
    );
  }
  return { status: "approved", apiKey };
}
