import type { SessionInfo } from "../../shared/desktop-api";
import type { SessionFacet } from "../facets";
import { notBuilt } from "../facets";
import type { HostConfig, LocalStore, SessionService } from "../host-context";

export interface SessionHandle extends SessionService {
  readonly facet: SessionFacet;
  close(): Promise<void>;
}

/** Restores the saved sign-in, if any. Stub until sign-in is built. */
export async function startSession(_config: HostConfig, _store: LocalStore): Promise<SessionHandle> {
  const info: SessionInfo = { state: "signed_out", serverUrl: null };
  return {
    info: () => info,
    credentials: () => null,
    client: () => null,
    onChange: () => () => {},
    facet: {
      getSession: async () => info,
      signInWithApiKey: async () => notBuilt("Signing in"),
      startSignInPairing: async () => notBuilt("Signing in by device code"),
      pollSignInPairing: async () => notBuilt("Signing in by device code"),
      signOut: async () => info,
    },
    close: async () => {},
  };
}
