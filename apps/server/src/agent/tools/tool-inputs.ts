// Input pieces the native tools share. Every field is bounded and described: the JSON Schema made
// from these is all a model knows of a tool's arguments.

import { MAX_TITLE_LENGTH } from "@tandem/core";
import { z } from "zod";

/** The most items one tool call lists. */
export const MAX_TOOL_LIMIT = 50;

/** The most Markdown one tool call writes (a note may grow past it over several calls). */
export const MAX_TOOL_CONTENT_CHARS = 100_000;

export const EntityId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const Title = z.string().trim().min(1).max(MAX_TITLE_LENGTH);

export const Markdown = z.string().max(MAX_TOOL_CONTENT_CHARS);

/** `limit`: at most {@link MAX_TOOL_LIMIT}, `fallback` when not given. */
export const limitOf = (fallback: number) =>
  z.number().int().min(1).max(MAX_TOOL_LIMIT).default(fallback).describe(`how many at most (${MAX_TOOL_LIMIT} at most)`);
