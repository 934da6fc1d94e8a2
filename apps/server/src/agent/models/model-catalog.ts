import { createRequire } from "node:module";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { ConfigError, type ServerConfig } from "../../config";
import { badRequest } from "../../http/errors";

export type ModelAlias = "default" | "fast" | "smart" | "local";
export type ModelProvider = ServerConfig["modelProvider"];

export interface ResolvedModel {
  readonly alias: ModelAlias;
  readonly provider: ModelProvider;
  readonly modelId: string;
  readonly model: LanguageModelV4;
}

export type ModelConfig = Pick<ServerConfig, "modelProvider" | "modelBaseUrl" | "modelApiKey" | "model" | "modelFast" | "modelSmart">;

/** Every alias, in the order lists show them; `default` first. */
export const MODEL_ALIASES: readonly ModelAlias[] = ["default", "fast", "smart", "local"];

/** The aliases that name the configured provider's models. */
type ProviderAlias = Exclude<ModelAlias, "local">;
const PROVIDER_ALIASES: readonly ProviderAlias[] = ["default", "fast", "smart"];

/** The model id the embedded `local` provider answers as. */
export const LOCAL_MODEL_ID = "tandem-local";

/** What the SDK and the documentation call the Anthropic API's base when none is configured. */
const ANTHROPIC_BASE_URL = "https://api.anthropic.com/v1";

/**
 * Refuses, at start, a remote provider without what it needs, naming the settings to give (never
 * their values: the API key is a secret). The `local` provider needs nothing.
 */
export function assertModelConfig(config: ModelConfig): void {
  const missing: string[] = [];
  if (config.modelProvider === "openai-compatible" && !config.modelBaseUrl) missing.push("TANDEM_MODEL_BASE_URL (--model-base-url)");
  if (config.modelProvider === "anthropic" && !config.modelApiKey) missing.push("TANDEM_MODEL_API_KEY");
  if (config.modelProvider !== "local" && !config.model) missing.push("TANDEM_MODEL (--model)");
  if (missing.length > 0) {
    throw new ConfigError(`modelProvider ${config.modelProvider} needs ${missing.join(" and ")}; see docs/operating.md#the-agents-model`);
  }
}

/** A function from a provider's model id to its language model. */
type ModelFactory = (modelId: string) => LanguageModelV4;

// The remote providers' SDKs are loaded only when one is configured; synchronously (require of an
// ES module, Node 22.12+), as a catalog is made in one step.
const requireProvider = createRequire(import.meta.url);

function remoteFactory(config: ModelConfig): ModelFactory {
  if (config.modelProvider === "anthropic") {
    const { createAnthropic } = requireProvider("@ai-sdk/anthropic") as typeof import("@ai-sdk/anthropic");
    // The base is always passed, so the SDK never falls back to ANTHROPIC_BASE_URL or ANTHROPIC_API_KEY
    // from the environment: what runs is what Tandem's own settings say.
    const anthropic = createAnthropic({ apiKey: config.modelApiKey, baseURL: config.modelBaseUrl ?? ANTHROPIC_BASE_URL });
    return (modelId) => anthropic.languageModel(modelId);
  }
  const { createOpenAICompatible } = requireProvider("@ai-sdk/openai-compatible") as typeof import("@ai-sdk/openai-compatible");
  const compatible = createOpenAICompatible({
    name: "openai-compatible",
    baseURL: config.modelBaseUrl as string,
    apiKey: config.modelApiKey,
    // Without it, streamed answers carry no token counts and usage could not be accounted.
    includeUsage: true,
  });
  return (modelId) => compatible.chatModel(modelId);
}

/**
 * The models the agent may run, by alias: `default`, `fast` and `smart` name the configured
 * provider's models (`fast` and `smart` fall back to `default`), and `local` is always the embedded
 * deterministic model. With the `local` provider every alias is the local model.
 */
export class ModelCatalog {
  readonly #provider: ModelProvider;
  readonly #ids: Readonly<Record<ProviderAlias, string>>;
  readonly #remote: Map<string, LanguageModelV4> = new Map();
  readonly #createRemote: ModelFactory | undefined;
  readonly #createLocal: () => LanguageModelV4;
  #local: LanguageModelV4 | undefined;

  constructor(config: ModelConfig, localModel: () => LanguageModelV4) {
    assertModelConfig(config);
    this.#provider = config.modelProvider;
    this.#createLocal = localModel;
    const local = config.modelProvider === "local";
    // assertModelConfig made sure a remote provider has `model`.
    const idOf = (chosen: string | undefined) => (local ? LOCAL_MODEL_ID : (chosen ?? (config.model as string)));
    this.#ids = { default: idOf(config.model), fast: idOf(config.modelFast), smart: idOf(config.modelSmart) };
    this.#createRemote = local ? undefined : remoteFactory(config);
  }

  /** The configured provider (what `default` runs on). */
  get provider(): ModelProvider {
    return this.#provider;
  }

  /**
   * Absent or empty means `default`; otherwise an alias, or exactly one of the configured model ids
   * (answered under the first alias that names it). Anything else is a 400 `invalid_model`.
   */
  resolve(requested?: string): ResolvedModel {
    const alias = this.#aliasOf(requested === undefined || requested === "" ? "default" : requested);
    if (!alias) {
      const shown = requested && requested.length > 80 ? `${requested.slice(0, 80)}…` : requested;
      throw badRequest(
        "invalid_model",
        `Unknown model "${shown}": use one of the aliases ${MODEL_ALIASES.join(", ")}, or a configured model id (GET /agent/models lists them)`,
      );
    }
    return this.#resolveAlias(alias);
  }

  /** Each alias with the provider and model id it runs on, for GET /agent/models and the docs. */
  list(): { alias: ModelAlias; provider: string; modelId: string }[] {
    return MODEL_ALIASES.map((alias) => {
      const { provider, modelId } = this.#describe(alias);
      return { alias, provider, modelId };
    });
  }

  #aliasOf(requested: string): ModelAlias | undefined {
    if ((MODEL_ALIASES as readonly string[]).includes(requested)) return requested as ModelAlias;
    if (requested === LOCAL_MODEL_ID) return this.#provider === "local" ? "default" : "local";
    return PROVIDER_ALIASES.find((alias) => this.#ids[alias] === requested);
  }

  #describe(alias: ModelAlias): { provider: ModelProvider; modelId: string } {
    return alias === "local" || this.#provider === "local"
      ? { provider: "local", modelId: LOCAL_MODEL_ID }
      : { provider: this.#provider, modelId: this.#ids[alias] };
  }

  #resolveAlias(alias: ModelAlias): ResolvedModel {
    const { provider, modelId } = this.#describe(alias);
    return { alias, provider, modelId, model: provider === "local" ? this.#localModel() : this.#remoteModel(modelId) };
  }

  /** Built on first use, so a server that never runs the local model never builds it. */
  #localModel(): LanguageModelV4 {
    this.#local ??= this.#createLocal();
    return this.#local;
  }

  #remoteModel(modelId: string): LanguageModelV4 {
    let model = this.#remote.get(modelId);
    if (!model) {
      model = (this.#createRemote as ModelFactory)(modelId);
      this.#remote.set(modelId, model);
    }
    return model;
  }
}
