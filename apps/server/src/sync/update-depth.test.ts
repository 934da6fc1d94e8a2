import { expect, it } from "vitest";
import * as Y from "yjs";
import { UNKNOWN_PARENT, updateDepth } from "./update-depth";

function nest(doc: Y.Doc, levels: number, under: Y.XmlFragment | Y.XmlElement = doc.getXmlFragment("default")) {
  let parent = under;
  doc.transact(() => {
    for (let i = 0; i < levels; i++) {
      const child = new Y.XmlElement("blockquote");
      parent.insert(parent.length, [child]);
      parent = child;
    }
    parent.insert(0, [new Y.XmlText("x")]);
  });
  return parent;
}

it("measures nesting within an update, on top of the document, through origins", () => {
  const server = new Y.Doc();
  const client = new Y.Doc();
  const updates: Uint8Array[] = [];
  client.on("update", (u: Uint8Array) => updates.push(u));
  const bottom = nest(client, 30);
  expect(updateDepth(server, updates[0] as Uint8Array)).toBe(31);
  Y.applyUpdate(server, updates[0] as Uint8Array);
  // Ten more levels under the existing bottom: measured from where they attach.
  nest(client, 10, bottom as Y.XmlElement);
  expect(updateDepth(server, updates[1] as Uint8Array)).toBe(41);
  // A sibling inserted after existing content inherits its parent from its origin.
  client.transact(() => (bottom as Y.XmlElement).insert((bottom as Y.XmlElement).length, [new Y.XmlElement("p")]));
  // Without the middle update, it hangs on content the server does not have.
  expect(updateDepth(server, updates[2] as Uint8Array)).toBe(UNKNOWN_PARENT);
  Y.applyUpdate(server, updates[1] as Uint8Array);
  expect(updateDepth(server, updates[2] as Uint8Array)).toBe(31);
  // A 20,000-level tree in one update.
  const deep = new Y.Doc();
  const deepUpdates: Uint8Array[] = [];
  deep.on("update", (u: Uint8Array) => deepUpdates.push(u));
  nest(deep, 20_000);
  expect(updateDepth(new Y.Doc(), deepUpdates[0] as Uint8Array)).toBe(20_001);
  // Maps (workspace documents) and plain text changes.
  const workspace = new Y.Doc();
  const wsUpdates: Uint8Array[] = [];
  workspace.on("update", (u: Uint8Array) => wsUpdates.push(u));
  workspace.transact(() => {
    const inner = new Y.Map();
    workspace.getMap("notes").set("a", inner);
    inner.set("tags", new Y.Array());
  });
  expect(updateDepth(new Y.Doc(), wsUpdates[0] as Uint8Array)).toBe(2);
});
