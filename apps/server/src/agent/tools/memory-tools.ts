import { z } from "zod";
import { MAX_MEMORY_PATH_DEPTH, searchMemory, writeMemory } from "../../workspace/memory/memory-service";
import { type AnyAgentTool, defineTool } from "./agent-tool";
import { limitOf, Markdown } from "./tool-inputs";

const memorySearchTool = defineTool({
  name: "memory_search",
  namespace: "memory",
  source: "native",
  readWrite: "read",
  needs: "os.memory:read",
  route: "memorySearch",
  description:
    "Search the agent's memory: the notes under the folder Memory (what is known about the user, their goals, journal). Answers each match with its path and a snippet.",
  input: z.object({
    query: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .describe("a question or words; ranked by how many of its words (stemmed) a note has and how rare they are"),
    limit: limitOf(10),
  }),
  async execute({ query, limit }, { app, grant }) {
    const hits = await searchMemory(
      app.db,
      app.database.dialect,
      grant.ownerId,
      query,
      limit,
      grant.folders === "all" ? undefined : grant.folders,
      app.embedder,
    );
    return { results: hits.map(({ noteId, title, path, snippet }) => ({ noteId, title, path, snippet })) };
  },
});

const memoryWriteTool = defineTool({
  name: "memory_write",
  namespace: "memory",
  source: "native",
  readWrite: "write",
  needs: "os.memory:write",
  // Memory is made of notes: writing it writes notes, so the grant must allow that too.
  alsoNeeds: ["os.notes:write"],
  route: null,
  description:
    "Remember something: append Markdown to (or replace) a memory note under the folder Memory, creating the note and its folders when missing.",
  input: z.object({
    path: z
      .string()
      .trim()
      .min(1)
      .max(1000)
      .describe(
        `where, relative to Memory: folders and the note's title, e.g. "Self/USER.md" or "Journal/2026-11-25" (a .md ending is dropped; at most ${MAX_MEMORY_PATH_DEPTH} levels)`,
      ),
    content: Markdown.describe("Markdown"),
    mode: z.enum(["append", "replace"]).default("append").describe("append to the note's end, or replace its body"),
  }),
  async execute(input, { app, grant }) {
    return { note: await writeMemory(app, grant.ownerId, input, grant.folders) };
  },
});

export const MEMORY_TOOLS: readonly AnyAgentTool[] = [memorySearchTool, memoryWriteTool];
