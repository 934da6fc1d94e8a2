// Not committed: seeds a server with 20,000 notes, replicates a host into /tmp/prof-data, prints memory.
import { startHost } from "../apps/desktop/src/host/host";
import { FileSecretStore } from "../apps/desktop/src/host/session/file-secret-store";
import { DEFAULT_SEED_OPTIONS } from "../bench/lib/notes-seed";
import { startSeededTandem } from "../bench/lib/seeded-tandem";
import { rm, writeFile } from "node:fs/promises";

const notes = Number(process.env.N ?? 20000);
const tandem = await startSeededTandem({ ...DEFAULT_SEED_OPTIONS, notes, folders: 8 });
console.log("seeded", tandem.server.url);
const dataDir = "/tmp/prof-data";
await rm(dataDir, { recursive: true, force: true });
const host = await startHost({ mode: "web", version: "0", dataDir, secrets: new FileSecretStore(dataDir) });
const t0 = performance.now();
await host.api.signInWithApiKey({ serverUrl: tandem.server.url, apiKey: tandem.apiKey });
for (;;) {
  const { sync } = await host.status();
  if (sync.state === "synced" && sync.documents === notes + 2) break;
  await new Promise((r) => setTimeout(r, 50));
}
console.log("synced in", Math.round(performance.now() - t0), "ms");
const mem = () => { const m = process.memoryUsage(); return `rss ${(m.rss/1048576).toFixed(0)} heapUsed ${(m.heapUsed/1048576).toFixed(0)} heapTotal ${(m.heapTotal/1048576).toFixed(0)} external ${(m.external/1048576).toFixed(0)} ab ${(m.arrayBuffers/1048576).toFixed(0)} open ${host.openDocuments()}`; };
console.log("after sync", mem());
(globalThis as { gc?: () => void }).gc?.();
await new Promise((r) => setTimeout(r, 2000));
(globalThis as { gc?: () => void }).gc?.();
console.log("after gc", mem());
if (process.env.SNAP) { const v8 = await import("node:v8"); v8.writeHeapSnapshot("/tmp/prof-heap.heapsnapshot"); }
await host.close();
await writeFile("/tmp/prof-server.json", JSON.stringify({ url: tandem.server.url, apiKey: tandem.apiKey }));
if (!process.env.KEEP) { await tandem.close(); process.exit(0); }
console.log("server kept running");
