import { TandemApiError } from "@tandem/core";
import { z } from "zod";
import type { RawMemoryFacet } from "../facets";
import { HostRefusal } from "../host-refusal";
import { parseInput } from "../parse-input";
import type { RawMemoryCollector } from "./collector";

const CodeInput = z.object({ code: z.string().trim().min(8).max(100) });
const DeviceInput = z.object({ deviceId: z.string().min(1).max(64) });
const SearchInput = z.object({ query: z.string().trim().min(1).max(200) });

/** The server's refusal (a key without `os.raw-memory`, a device of another account…) in its own words, not as the host's fault. */
async function refusing<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof TandemApiError) {
      const scope =
        error.body.error === "insufficient_scope" ? " (raw memory needs a key with os.raw-memory:read and os.raw-memory:write)" : "";
      throw new HostRefusal(`${String(error.body.message ?? error.message)}${scope}`, 422, { cause: error });
    }
    throw error;
  }
}

/** The page's view of raw memory: the collector's state, its switches and the local search. */
export function createRawMemoryFacet(collector: RawMemoryCollector): RawMemoryFacet {
  return {
    getRawMemory: () => collector.status(),
    enableRawMemory: () => refusing(collector.enable()),
    confirmRawMemoryRecovery: () => collector.confirmSaved(),
    recoverRawMemory: async (input) => refusing(collector.recover(parseInput("recoverRawMemory", CodeInput, input).code)),
    disableRawMemory: () => collector.disable(),
    forgetRawMemoryDevice: async (input) => refusing(collector.forget(parseInput("forgetRawMemoryDevice", DeviceInput, input).deviceId)),
    searchRawMemory: async (input) => refusing(collector.search(parseInput("searchRawMemory", SearchInput, input).query)),
  };
}
