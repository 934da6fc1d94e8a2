import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readStamp, sourceHash, writeStamp } from "./build-stamp";

describe("the web build's source stamp", () => {
  let root: string;
  const inputs = ["src", "config.ts", "../shared"];
  beforeEach(async () => {
    const base = await mkdtemp(path.join(tmpdir(), "tandem-stamp-"));
    root = path.join(base, "app");
    await mkdir(path.join(root, "src", "deep"), { recursive: true });
    await mkdir(path.join(base, "shared"), { recursive: true });
    await writeFile(path.join(root, "src", "a.ts"), "export const a = 1;\n");
    await writeFile(path.join(root, "src", "deep", "b.tsx"), "export const b = 2;\n");
    await writeFile(path.join(root, "config.ts"), "export default {};\n");
    await writeFile(path.join(base, "shared", "c.ts"), "export const c = 3;\n");
  });
  afterEach(() => rm(path.dirname(root), { recursive: true, force: true }));

  it("stays the same while nothing the build reads changes", async () => {
    const first = await sourceHash(root, inputs);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    // Tests, build output and dot-files are not inputs of the build.
    await writeFile(path.join(root, "src", "a.test.ts"), "test");
    await mkdir(path.join(root, "src", "out"), { recursive: true });
    await writeFile(path.join(root, "src", "out", "x.js"), "built");
    await writeFile(path.join(root, "src", ".DS_Store"), "noise");
    expect(await sourceHash(root, inputs)).toBe(first);
  });

  it.each([
    ["a source's content", (r: string) => writeFile(path.join(r, "src", "deep", "b.tsx"), "export const b = 3;\n")],
    ["a new source", (r: string) => writeFile(path.join(r, "src", "deep", "new.ts"), "")],
    [
      "a renamed source",
      (r: string) => rm(path.join(r, "src", "a.ts")).then(() => writeFile(path.join(r, "src", "a2.ts"), "export const a = 1;\n")),
    ],
    ["a listed file", (r: string) => writeFile(path.join(r, "config.ts"), "export default { x: 1 };\n")],
    ["a file outside the package", (r: string) => writeFile(path.join(r, "..", "shared", "c.ts"), "export const c = 4;\n")],
  ])("changes with %s", async (_what, change) => {
    const before = await sourceHash(root, inputs);
    await change(root);
    expect(await sourceHash(root, inputs)).not.toBe(before);
  });

  it("ignores an input that does not exist", async () => {
    expect(await sourceHash(root, [...inputs, "missing"])).toBe(await sourceHash(root, inputs));
  });

  it("reads back what was written, and nothing when there is no stamp", async () => {
    const stamp = path.join(root, "stamp");
    expect(await readStamp(stamp)).toBeUndefined();
    await writeStamp(stamp, "abc123");
    expect(await readStamp(stamp)).toBe("abc123");
  });
});
