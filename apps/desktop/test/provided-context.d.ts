// What the global setup (global-setup.ts) provides to the test files, by name.
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** An empty folder for this run's one production build of the app (see `buildApp`). */
    desktopBuildDir: string;
  }
}
