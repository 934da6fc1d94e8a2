import type { BridgeRuntime } from "../../../shared/desktop-api";
import type { BridgeOptions } from "../../host-context";
import { ClaudeCodeRuntime } from "./claude-code-runtime";
import { CodexRuntime } from "./codex-runtime";
import { FakeRuntime } from "./fake-runtime";
import type { RuntimeAdapter } from "./runtime-adapter";

/** The adapter for what was paired, unless the host's options force one (tests: `fake`). */
export function createRuntime(paired: BridgeRuntime, options: BridgeOptions = {}): RuntimeAdapter {
  switch (options.adapter ?? paired) {
    case "fake":
      return new FakeRuntime(options.fakeToolCalls ?? [], options.onFakeRuntime);
    case "codex":
      return new CodexRuntime(options.codexCommand);
    case "claude-code":
      return new ClaudeCodeRuntime(options.claudeCommand);
  }
}
