import { DESKTOP_API_METHODS, type DesktopApi, type DesktopApiMethod } from "./desktop-api";

/**
 * Every API call crosses a process boundary as a method name and its arguments. Electron carries
 * them over IPC, web mode over HTTP; both sides of both transports are built from these helpers.
 */
export type DesktopApiCall = (method: DesktopApiMethod, args: unknown[]) => Promise<unknown>;

/** The IPC channel carrying one method between preload and main. */
export function ipcChannelFor(method: DesktopApiMethod): string {
  return `tandem:${method}`;
}

/** Web mode answers `POST <HOST_API_PATH><method>`, whose JSON body is the argument list. */
export const HOST_API_PATH = "/__host/";

export function isDesktopApiMethod(name: string): name is DesktopApiMethod {
  return (DESKTOP_API_METHODS as readonly string[]).includes(name);
}

/** The renderer's side: a typed API whose every method becomes one call on the transport. */
export function createDesktopApiClient(call: DesktopApiCall): DesktopApi {
  const methods = DESKTOP_API_METHODS.map((method) => [method, (...args: unknown[]) => call(method, args)]);
  // The transport returns what the host's implementation of the same interface returned.
  return Object.freeze(Object.fromEntries(methods)) as DesktopApi;
}

/** The host's side: runs one call that arrived over a transport. */
export function invokeDesktopApi(api: DesktopApi, method: DesktopApiMethod, args: unknown[]): Promise<unknown> {
  // Arguments arrive as untrusted JSON; every host method validates its own input.
  const implementation = api[method] as unknown as (...args: unknown[]) => Promise<unknown>;
  return implementation.apply(api, args);
}
