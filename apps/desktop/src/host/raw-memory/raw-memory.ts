import { z } from "zod";
import type { RawMemoryFacet } from "../facets";
import { parseInput } from "../parse-input";
import type { RawMemoryCollector } from "./collector";

const CodeInput = z.object({ code: z.string().trim().min(8).max(100) });
const DeviceInput = z.object({ deviceId: z.string().min(1).max(64) });
const SearchInput = z.object({ query: z.string().trim().min(1).max(200) });

/** The page's view of raw memory: the collector's state, its switches and the local search. */
export function createRawMemoryFacet(collector: RawMemoryCollector): RawMemoryFacet {
  return {
    getRawMemory: () => collector.status(),
    enableRawMemory: () => collector.enable(),
    confirmRawMemoryRecovery: () => collector.confirmSaved(),
    recoverRawMemory: async (input) => collector.recover(parseInput("recoverRawMemory", CodeInput, input).code),
    disableRawMemory: () => collector.disable(),
    forgetRawMemoryDevice: async (input) => collector.forget(parseInput("forgetRawMemoryDevice", DeviceInput, input).deviceId),
    searchRawMemory: async (input) => collector.search(parseInput("searchRawMemory", SearchInput, input).query),
  };
}
