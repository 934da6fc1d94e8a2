/**
 * Child process holding the Tandem server for `desktop`, on a seeded notes workspace
 * (`startSeededTandem`): apart from the desktop host and the baseline's clients, as a real server
 * is, so neither shares its event loop with the server.
 */
import { serveParent } from "./child";
import type { SeedOptions, SeedResult } from "./notes-seed";
import { type SeededTandem, startSeededTandem } from "./seeded-tandem";

export interface DesktopServerInfo {
  /** `http://127.0.0.1:<port>`, what the desktop signs in to. */
  readonly url: string;
  /** `ws://127.0.0.1:<port>/sync` */
  readonly syncUrl: string;
  readonly apiKey: string;
  readonly userId: number;
  readonly noteUuids: readonly string[];
  readonly seed: SeedResult;
  readonly seedWallMs: number;
}

let tandem: SeededTandem | undefined;

async function stop(): Promise<void> {
  const running = tandem;
  tandem = undefined;
  await running?.close();
}

serveParent(
  {
    start: async (input) => {
      tandem = await startSeededTandem(input as SeedOptions);
      const notes = await tandem.server.context.db.selectFrom("notes").select("uuid").where("owner_id", "=", tandem.userId).execute();
      return {
        url: tandem.server.url,
        syncUrl: tandem.server.syncUrl,
        apiKey: tandem.apiKey,
        userId: tandem.userId,
        noteUuids: notes.map((note) => note.uuid),
        seed: tandem.seed,
        seedWallMs: tandem.seedWallMs,
      } satisfies DesktopServerInfo;
    },
    /** Documents the server holds open (0 once every client has left and they are unloaded). */
    openDocuments: async () => tandem?.server.context.sync.hocuspocus.getDocumentsCount() ?? 0,
    /** Stops the server and deletes its data: the server is down from now on. */
    stop,
  },
  stop,
);
