/**
 * Child process that seeds a notes workspace into a data directory (see notes-seed.ts), so the
 * benchmark process starts its server with none of the seeding's garbage in its heap.
 */
import { openDatabase } from "../../apps/server/src/db/database";
import { createUser } from "../../apps/server/src/people/users/users-service";
import { serveParent } from "./child";
import { type SeedOptions, type SeedResult, seedNotesWorkspace } from "./notes-seed";

export interface SeedRequest {
  readonly dataDir: string;
  /** PostgreSQL instead of the data directory's SQLite file. */
  readonly databaseUrl?: string;
  readonly username: string;
  readonly options: SeedOptions;
}

export interface SeedAnswer {
  readonly userId: number;
  readonly result: SeedResult;
  /** Includes opening and migrating the database. */
  readonly wallMs: number;
}

serveParent({
  seed: async (input) => {
    const { dataDir, databaseUrl, username, options } = input as SeedRequest;
    const started = performance.now();
    const database = await openDatabase({ dataDir, databaseUrl });
    try {
      const user = await createUser(database.db, { username });
      const result = await seedNotesWorkspace(database.db, user.id, options);
      return { userId: user.id, result, wallMs: performance.now() - started } satisfies SeedAnswer;
    } finally {
      await database.close();
    }
  },
});
