import { createHash, randomUUID } from "node:crypto";
import type { TandemClient } from "@tandem/core";
import { z } from "zod";
import type { SessionInfo, SignInPairingProgress } from "../../shared/desktop-api";
import type { SessionFacet } from "../facets";
import type { HostConfig, LocalStore, SessionService } from "../host-context";
import { asRefusal, HostRefusal } from "../host-refusal";
import { parseInput } from "../parse-input";
import { ServerUnreachableError, type VerifiedIdentity, verifyApiKey } from "./identity";
import { serverClient } from "./server-client";
import { normaliseServerUrl } from "./server-url";
import { pollSignInCode, type SignInCode, startSignInCode } from "./sign-in-code";

export interface SessionHandle extends SessionService {
  readonly facet: SessionFacet;
  close(): Promise<void>;
}

/** The secret store's name for the signed-in user's API key. */
export const API_KEY_SECRET = "apiKey";
/** Settings: the last server (kept after sign-out, to fill in the form), who is signed in, and this install's id for sign-in codes. */
export const SETTING_SERVER_URL = "session.serverUrl";
export const SETTING_IDENTITY = "session.identity";
export const SETTING_SIGN_IN_DEVICE_ID = "session.signInDeviceId";
/**
 * Accounts this device has signed in with, by a SHA-256 of server URL and key (never the key
 * itself), so signing back in while the server is down works from the local store.
 */
export const SETTING_KNOWN_ACCOUNTS = "session.knownAccounts";

const SignInInput = z.object({
  serverUrl: z.string().max(2048),
  apiKey: z.string().trim().min(1, { error: "must not be empty" }).max(1024),
});
const PairingInput = z.object({ serverUrl: z.string().max(2048) });
const StoredIdentity = z.object({ userId: z.number().int().positive(), username: z.string(), name: z.string().nullable() });
const KnownAccounts = z.record(z.string(), StoredIdentity);

const accountKey = (serverUrl: string, apiKey: string) => createHash("sha256").update(`${serverUrl}\n${apiKey}`).digest("hex");

async function knownAccounts(store: LocalStore): Promise<z.infer<typeof KnownAccounts>> {
  try {
    return KnownAccounts.parse(JSON.parse((await store.getSetting(SETTING_KNOWN_ACCOUNTS)) ?? "{}"));
  } catch {
    return {}; // unreadable: as if none were known
  }
}

interface SignedIn {
  readonly serverUrl: string;
  readonly apiKey: string;
  readonly identity: VerifiedIdentity;
}

/**
 * Who is signed in. The API key lives in the secret store, the server URL and identity in the
 * settings; at start the saved session is restored without asking the server (it may be
 * unreachable: replication retries, and reports an error if the server refuses the key).
 */
export async function startSession(config: HostConfig, store: LocalStore): Promise<SessionHandle> {
  let current: SignedIn | null = await restore(config, store);
  let lastServerUrl = current?.serverUrl ?? (await store.getSetting(SETTING_SERVER_URL));
  let signInCode: SignInCode | null = null;
  const listeners = new Set<(info: SessionInfo) => void>();
  // Sign-in and sign-out change several stores; one at a time.
  let queue: Promise<unknown> = Promise.resolve();
  const serialised = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work);
    queue = next.catch(() => {});
    return next;
  };

  const info = (): SessionInfo =>
    current ? { state: "signed_in", serverUrl: current.serverUrl, ...current.identity } : { state: "signed_out", serverUrl: lastServerUrl };

  /** Tells every listener, and waits for those that answer a promise (replication starting or stopping). */
  const changed = async () => {
    const now = info();
    await Promise.all([...listeners].map(async (listener) => listener(now)));
  };

  /** Keeps a verified key and announces the new session. */
  const adopt = async (serverUrl: string, apiKey: string, identity: VerifiedIdentity): Promise<SessionInfo> => {
    await config.secrets.set(API_KEY_SECRET, apiKey);
    await store.setSetting(SETTING_SERVER_URL, serverUrl);
    await store.setSetting(SETTING_IDENTITY, JSON.stringify(identity));
    const known = await knownAccounts(store);
    known[accountKey(serverUrl, apiKey)] = identity;
    await store.setSetting(SETTING_KNOWN_ACCOUNTS, JSON.stringify(known));
    current = { serverUrl, apiKey, identity };
    lastServerUrl = serverUrl;
    signInCode = null;
    await changed();
    return info();
  };

  const deviceId = async (): Promise<string> => {
    const saved = await store.getSetting(SETTING_SIGN_IN_DEVICE_ID);
    if (saved) return saved;
    const created = `desktop-${randomUUID()}`;
    await store.setSetting(SETTING_SIGN_IN_DEVICE_ID, created);
    return created;
  };

  return {
    info,
    credentials: () => (current ? { serverUrl: current.serverUrl, apiKey: current.apiKey, userId: current.identity.userId } : null),
    client: (): TandemClient | null => (current ? serverClient(current.serverUrl, current.apiKey) : null),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    facet: {
      getSession: async () => info(),
      signInWithApiKey: (input) =>
        serialised(async () => {
          const { serverUrl, apiKey } = parseInput("signInWithApiKey", SignInInput, input);
          let url: string;
          let identity: VerifiedIdentity;
          try {
            url = normaliseServerUrl(serverUrl);
          } catch (error) {
            throw asRefusal(error);
          }
          try {
            identity = await verifyApiKey(url, apiKey);
          } catch (error) {
            // The server is down, but this device knows the account: work from the local store
            // (replication reports an error later if the server refuses the key once it is back).
            const known = error instanceof ServerUnreachableError ? (await knownAccounts(store))[accountKey(url, apiKey)] : undefined;
            // A key refused (or a server out of reach) is the sign-in's answer, not a fault of the host.
            if (!known) throw asRefusal(error);
            identity = known;
          }
          return adopt(url, apiKey, identity);
        }),
      startSignInPairing: async (input) => {
        const { serverUrl } = parseInput("startSignInPairing", PairingInput, input);
        const id = await deviceId();
        try {
          signInCode = await startSignInCode(normaliseServerUrl(serverUrl), id);
        } catch (error) {
          throw asRefusal(error);
        }
        return signInCode.prompt;
      },
      pollSignInPairing: () =>
        serialised(async (): Promise<SignInPairingProgress> => {
          const code = signInCode;
          if (!code) throw new HostRefusal("No sign-in by code is in progress: start one first", 409);
          const result = await pollSignInCode(code).catch((error: unknown) => {
            throw asRefusal(error);
          });
          if (result.status !== "approved") {
            if (result.status !== "pending") signInCode = null;
            return { status: result.status };
          }
          const session = await adopt(code.serverUrl, result.apiKey, await verifyApiKey(code.serverUrl, result.apiKey));
          return { status: "approved", session };
        }),
      signOut: () =>
        serialised(async () => {
          if (!current) return info();
          current = null;
          // Replication stops before the key is forgotten; the local documents stay.
          await changed();
          await store.setSetting(SETTING_IDENTITY, null);
          await config.secrets.delete(API_KEY_SECRET);
          return info();
        }),
    },
    close: async () => {
      listeners.clear();
      await queue;
    },
  };
}

/** The saved session, if the settings and the secret store both still hold it. */
async function restore(config: HostConfig, store: LocalStore): Promise<SignedIn | null> {
  const [serverUrl, identityJson, apiKey] = await Promise.all([
    store.getSetting(SETTING_SERVER_URL),
    store.getSetting(SETTING_IDENTITY),
    config.secrets.get(API_KEY_SECRET),
  ]);
  if (!serverUrl || !identityJson || !apiKey) return null;
  let identity: z.infer<typeof StoredIdentity>;
  try {
    identity = StoredIdentity.parse(JSON.parse(identityJson));
  } catch {
    return null;
  }
  return { serverUrl, apiKey, identity };
}
