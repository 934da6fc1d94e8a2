import type { Hocuspocus } from "@hocuspocus/server";
import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import type { Logger } from "../logger";
import { readAccessEpoch } from "./access-epoch";
import type { DocumentAccess } from "./document-access";
import { askToRetryLater, isUnavailable } from "./retry-later";

/** What the guard needs of a connection's context (REST writes have none of it). */
export interface GuardedContext {
  /** The credential a socket opened the document with. */
  token?: string;
  /** The access epoch as this instance knew it before the credential was checked. */
  epoch?: number;
}

/** Decides again what a credential may do with a document, as when it was opened. */
export type AccessCheck = (token: string, documentName: string) => Promise<DocumentAccess | null>;

/** How often each instance reads the access epoch: the bound on how long a revocation made elsewhere takes to bite. */
export const ACCESS_POLL_MS = 1000;

/** How the guard closes a connection that lost its document (a Close message carries only the reason). */
export const REVOKED = { code: 4403, reason: "access revoked" };

/**
 * Keeps open sync connections within what their credentials may do now, not only when they
 * connected. Whenever access may have been taken away (the database's access epoch moved, or
 * this process says so at once), every open connection is checked again like a new one: one that
 * lost its document is closed, one that may now only read becomes read-only. The epoch is read
 * from the database, so a key revoked by the CLI or a share removed through another instance
 * closes this instance's connections too.
 */
export class ConnectionGuard {
  #epoch: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #checkAgain = false;

  constructor(
    private readonly hocuspocus: Hocuspocus,
    private readonly db: Kysely<Schema>,
    private readonly check: AccessCheck,
    private readonly logger: Logger,
  ) {}

  /** Reads the epoch once before any connection is admitted, then watches it. */
  async start(): Promise<void> {
    this.#epoch = await readAccessEpoch(this.db);
    this.#timer = setInterval(() => void this.#poll(), ACCESS_POLL_MS);
    this.#timer.unref();
  }

  /** The access epoch as last read: a connection remembers it before its credential is checked. */
  get epoch(): number | undefined {
    return this.#epoch;
  }

  /**
   * Called once a connection is set up: if access may have been taken away between its check and
   * now (the epoch moved, and the re-check that followed could not see it yet), checks again.
   */
  admitted(context: GuardedContext): void {
    if (context.token !== undefined && context.epoch !== this.#epoch) void this.recheck();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#checking;
  }

  /** Re-checks every open connection now; calls made while a check runs coalesce into one more. */
  recheck(): Promise<void> {
    if (this.#checking) {
      this.#checkAgain = true;
      return this.#checking;
    }
    this.#checking = (async () => {
      do {
        this.#checkAgain = false;
        await this.#checkAll();
      } while (this.#checkAgain);
    })().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  async #poll(): Promise<void> {
    try {
      const epoch = await readAccessEpoch(this.db);
      const moved = this.#epoch !== undefined && epoch !== this.#epoch;
      this.#epoch = epoch;
      if (moved) await this.recheck();
    } catch (error) {
      this.logger.warn({ err: error }, "could not re-check sync access");
    }
  }

  async #checkAll(): Promise<void> {
    for (const document of [...this.hocuspocus.documents.values()]) {
      for (const connection of document.getConnections()) {
        const { token } = connection.context as GuardedContext;
        // Fail closed: a check that cannot complete ends the connection (the client reconnects and is checked afresh).
        let unavailable = false;
        const access =
          token === undefined
            ? null
            : await this.check(token, document.name).catch((error: unknown) => {
                unavailable = isUnavailable(error);
                return null;
              });
        if (access === "write") continue;
        // Read-only first, so updates already queued on the connection are refused too.
        connection.readOnly = true;
        // Storage unreachable is no revocation: the socket closes with "try again later", and the client,
        // reconnecting once storage is back, is checked afresh (a document closed as revoked would stay closed).
        if (unavailable) askToRetryLater(connection.context);
        else if (access === null) connection.close(REVOKED);
      }
    }
  }
}
