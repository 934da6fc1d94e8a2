#!/usr/bin/env node
// The server is TypeScript run through tsx's loader, so the repository needs no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
