import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { accumulate } from "./accumulate-service";

export function accumulateHandlers(context: AppContext): RouteHandlers<"accumulate"> {
  return {
    accumulate: async ({ input, principal }) => ({ success: true, ...(await accumulate(context, principal.userId, input.body)) }),
  };
}
