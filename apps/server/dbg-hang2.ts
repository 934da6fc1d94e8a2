import { ALL_SCOPES } from "@tandem/core";
import { createApiKey } from "./src/auth/api-keys";
import { ServerConfigSchema } from "./src/config";
import { startServer } from "./src/server";
import { createUser } from "./src/users/users-service";

const config = ServerConfigSchema.parse({ port: 0, dataDir: `/tmp/ci-dbg/${Date.now()}`, logLevel: "silent" });
const server = await startServer(config);
const hp = server.context.sync.hocuspocus;
const docs: any[] = [];
hp.configuration.extensions.push({
  afterLoadDocument: async ({ document, documentName }: any) => {
    document.__id = docs.length;
    docs.push(document);
    console.log("loaded", documentName, docs.length - 1);
  },
  afterUnloadDocument: async ({ documentName }: any) => console.log("unloaded", documentName),
} as any);
const origUnload = hp.unloadDocument.bind(hp);
hp.unloadDocument = async (d: any) => {
  console.log(
    "unload called",
    d.name,
    d.__id,
    "mapid",
    hp.documents.get(d.name)?.__id,
    "unloading?",
    hp.unloadingDocuments.has(d.name),
    "inmap",
    hp.documents.get(d.name) === d,
    "should",
    hp.shouldUnloadDocument(d),
  );
  return origUnload(d);
};
const user = await createUser(server.context.db, { username: "x" });
const key = await createApiKey(server.context.db, { userId: user.id, scopes: ALL_SCOPES });
const n = Number(process.argv[2] ?? 15);
const texts = Array.from({ length: n }, (_, i) => ({ title: `T ${i}`, content: `c ${i}`, folder: "Import" }));
const r = await fetch(`${server.apiUrl}/accumulate`, {
  method: "POST",
  headers: { authorization: `Bearer ${key.apiKey}`, "content-type": "application/json" },
  body: JSON.stringify({ texts }),
});
console.log(r.status);
await new Promise((r) => setTimeout(r, 1000));
console.log("CLOSE");
await server.close();
for (const d of docs)
  if (!d.isDestroyed)
    console.log("leaked", d.name, d.__id, hp.documents.get(d.name) === d, d.getConnectionsCount(), d.directConnectionsCount);
process.exit(0);
