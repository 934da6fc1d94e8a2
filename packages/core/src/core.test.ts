import { describe, expect, it } from "vitest";
import {
  buildPath,
  folderNameKey,
  folderNameProblem,
  parseScopeList,
  relativeTime,
  routes,
  splitFolderPath,
  usernameProblem,
} from "./index";
import { buildOpenApiDocument, openApiPath } from "./openapi";

describe("scopes", () => {
  it("parses a comma-separated list, dropping blanks and repeats", () => {
    expect(parseScopeList("os.notes:read, os.todos:write,,os.notes:read")).toEqual(["os.notes:read", "os.todos:write"]);
  });
  it.each(["", "os.notes", "os.notes:admin", "notes:read", "os.notes:run"])("refuses %j", (list) => {
    expect(() => parseScopeList(list)).toThrow();
  });
});

describe("folder names and paths", () => {
  it.each([
    ["", "must not be empty"],
    ["a/b", "'/'"],
    ["..", "'.'"],
    ["x".repeat(256), "at most"],
  ])("refuses %j", (name, problem) => {
    expect(folderNameProblem(name)).toContain(problem);
  });
  it("splits paths, tolerating outer slashes", () => {
    expect(splitFolderPath("/a/ b /c/")).toEqual({ segments: ["a", "b", "c"] });
    expect(splitFolderPath("a//b")).toEqual({ problem: expect.stringContaining("segment 2") });
  });
  it("folds case and Unicode normalisation for sibling uniqueness", () => {
    expect(folderNameKey("Cafe\u0301")).toBe(folderNameKey("CAFÉ"));
  });
});

describe("usernames", () => {
  it("reserves the agent suffix", () => {
    expect(usernameProblem("bob_coo")).toContain("_coo");
    expect(usernameProblem("bob")).toBeNull();
  });
});

describe("route table", () => {
  it("fills path parameters, encoded", () => {
    expect(buildPath("/os/notes/:id/copy", { id: "a b" })).toBe("/os/notes/a%20b/copy");
    expect(() => buildPath("/os/notes/:id", {})).toThrow("id");
    expect(openApiPath("/os/snapshots/:noteId/seq/:seq")).toBe("/os/snapshots/{noteId}/seq/{seq}");
  });

  it("documents every route with its scope and credential", () => {
    const document = buildOpenApiDocument() as { paths: Record<string, Record<string, { "x-required-scope"?: string }>> };
    for (const route of Object.values(routes)) {
      const operation = document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation?.["x-required-scope"]).toBe("scope" in route ? route.scope : undefined);
    }
  });
});

describe("relativeTime", () => {
  const now = new Date("2026-11-22T12:00:00.000Z");
  it.each([
    ["2026-11-22T11:59:30.000Z", "just now"],
    ["2026-11-22T11:55:00.000Z", "5 minutes ago"],
    ["2026-11-22T11:00:00.000Z", "1 hour ago"],
    ["2026-11-21T10:00:00.000Z", "yesterday"],
    ["2026-11-18T12:00:00.000Z", "4 days ago"],
    ["2026-11-01T12:00:00.000Z", "3 weeks ago"],
    ["2026-06-01T12:00:00.000Z", "5 months ago"],
    ["2024-11-01T12:00:00.000Z", "2 years ago"],
    ["2027-01-01T00:00:00.000Z", "just now"],
  ])("%s is %s", (iso, expected) => {
    expect(relativeTime(iso, now)).toBe(expected);
  });
});
