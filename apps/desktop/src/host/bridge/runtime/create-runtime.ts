import type { BridgeRuntime } from "../../../shared/desktop-api";
import type { BridgeOptions } from "../../host-context";
import { CLAUDE_COMMAND, ClaudeCodeRuntime } from "./claude-code-runtime";
import { CODEX_COMMAND, CodexRuntime } from "./codex-runtime";
import { commandInstalled } from "./command-installed";
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

/** Whether the program {@link createRuntime} would run is on this computer (the scripted fake always is). */
export function runtimeInstalled(paired: BridgeRuntime, options: BridgeOptions = {}): Promise<boolean> {
  switch (options.adapter ?? paired) {
    case "fake":
      return Promise.resolve(true);
    case "codex":
      return commandInstalled(options.codexCommand ?? CODEX_COMMAND);
    case "claude-code":
      return commandInstalled(options.claudeCommand ?? CLAUDE_COMMAND);
  }
}
