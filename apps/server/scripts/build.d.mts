// Types of build.mjs, for the TypeScript that imports it (src/share/guest-rich-text.ts, the tests' global setup).
import type { BuildOptions, BuildResult } from "esbuild";

export declare const guestRichTextOptions: BuildOptions & { stdin: NonNullable<BuildOptions["stdin"]> };
export declare function guestRichTextCode(result: BuildResult): string;
export declare function isBuildFresh(): boolean;
export declare function ensureBuilt(options?: { force?: boolean }): Promise<boolean>;
