import type { RouteId, Scope } from "@tandem/core";
import type { z } from "zod";
import type { AppContext } from "../../context";
import type { RunGrant } from "./run-grant";

/** Where a tool's code lives: our own, a remote MCP server's, or a third-party integration's. */
export type ToolSource = "native" | "mcp" | "integration";

/** What a tool run sees besides its input: the server, the grant it runs under, the caller's clock. */
export interface ToolRunContext {
  readonly app: AppContext;
  readonly grant: RunGrant;
  /** The caller's IANA time zone, for anything that speaks of "today" or "overdue". */
  readonly timezone: string;
  /** Aborted when the run is cancelled (the client went away, or a limit was reached). */
  readonly signal: AbortSignal;
}

/**
 * One operation the agent, `POST /tools` (and, later, the MCP server) can run. A tool declares
 * what it needs; the capability filter ({@link toolsetFor}) keeps it out of any run whose grant
 * lacks that, and data tools also filter what they touch by the same grant.
 */
export interface AgentTool<I = unknown, O = unknown> {
  /** Unique across the registry, snake_case, as older clients call it (`search_notes`). */
  readonly name: string;
  readonly namespace: string;
  readonly source: ToolSource;
  readonly readWrite: "read" | "write";
  readonly description: string;
  /** Validates the model's (or a client's) arguments; its JSON Schema is what models are shown. */
  readonly input: z.ZodType<I>;
  /**
   * The JSON Schema models are shown, when it is not `input`'s: a remote tool's own (vetted)
   * schema, which its server checks; `input` then only makes sure the arguments are an object.
   */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /**
   * A remote tool's name on its server, when the registry had to give it another (`name` was
   * taken): `namespace.remoteName` still calls it.
   */
  readonly remoteName?: string;
  /** The scope a grant must hold for this tool to exist in a run. */
  readonly needs: Scope;
  /** Scopes it needs besides, for tools that reach into another area (memory is made of notes). */
  readonly alsoNeeds?: readonly Scope[];
  /**
   * The v1 route that does what this tool does (`save_snapshot`: `createSnapshot`), or null when
   * none does. Every native tool names one: its `needs` and `alsoNeeds` are then exactly the
   * route's `scope` and `alsoRequires`, so no door to an operation is wider than the other (a test
   * holds them equal). Remote tools have none.
   */
  readonly route?: RouteId | null;
  execute(input: I, context: ToolRunContext): Promise<O>;
}

/** Keeps a tool's input type while storing it in a list of tools of any input. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type
export type AnyAgentTool = AgentTool<any, unknown>;

export function defineTool<I, O>(tool: AgentTool<I, O>): AgentTool<I, O> {
  return tool;
}
