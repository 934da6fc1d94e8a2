import type { EmbeddingModel } from "ai";
import type { ServerConfig } from "../../config";
import type { Logger } from "../../logger";

/** A query waits at most this long for its embedding; then it is answered by words alone. */
const QUERY_TIMEOUT_MS = 3_000;
/** A batch of note bodies may take this long (a local model on a CPU is slow). */
const BATCH_TIMEOUT_MS = 120_000;
/** After a failure the provider is left alone this long, doubling with each failure in a row, up to the maximum. */
const PAUSE_MS = 5_000;
const MAX_PAUSE_MS = 5 * 60_000;

/**
 * The configured embedding model, and whether it is usable right now. Every failure (down, slow,
 * an error answer, garbage) pauses it for a while, so neither search nor the indexer waits on a
 * provider that is not answering; searches meanwhile rank by words alone.
 */
export class Embedder {
  #failures = 0;
  #pausedUntil = 0;

  constructor(
    private readonly model: Exclude<EmbeddingModel, string>,
    /** The model's id, which stored vectors are keyed by: vectors of different models never mix. */
    readonly modelId: string,
    private readonly logger: Logger,
  ) {}

  /** Whether the provider may be asked now (it has not failed recently). */
  get available(): boolean {
    return Date.now() >= this.#pausedUntil;
  }

  /** How long until the provider may be asked again, in ms (0 when it may be asked now). */
  get pausedForMs(): number {
    return Math.max(0, this.#pausedUntil - Date.now());
  }

  /** Unit-length embeddings of the texts, in their order; throws when the provider fails. */
  async embedDocuments(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const abortSignal = signal ? AbortSignal.any([signal, AbortSignal.timeout(BATCH_TIMEOUT_MS)]) : AbortSignal.timeout(BATCH_TIMEOUT_MS);
    return this.#call(async () => {
      const { embedMany } = await import("ai");
      const { embeddings } = await embedMany({ model: this.model, values: [...texts], maxRetries: 0, maxParallelCalls: 1, abortSignal });
      if (embeddings.length !== texts.length) throw new Error(`asked for ${texts.length} embeddings, got ${embeddings.length}`);
      return embeddings.map(unitVector);
    }, signal);
  }

  /** The query's unit-length embedding, or null when the provider is paused, fails or is slow. */
  async embedQuery(text: string): Promise<Float32Array | null> {
    if (!this.available) return null;
    try {
      return await this.#call(async () => {
        const { embed } = await import("ai");
        const { embedding } = await embed({
          model: this.model,
          value: text,
          maxRetries: 0,
          abortSignal: AbortSignal.timeout(QUERY_TIMEOUT_MS),
        });
        return unitVector(embedding);
      });
    } catch {
      return null;
    }
  }

  /** Runs one call to the provider; a failure pauses it, unless the caller gave up (shutdown). */
  async #call<T>(work: () => Promise<T>, cancel?: AbortSignal): Promise<T> {
    try {
      const result = await work();
      if (this.#failures > 0) this.logger.info({ model: this.modelId }, "embedding provider answers again");
      this.#failures = 0;
      this.#pausedUntil = 0;
      return result;
    } catch (error) {
      if (cancel?.aborted) throw error;
      this.#failures++;
      const pause = Math.min(MAX_PAUSE_MS, PAUSE_MS * 2 ** (this.#failures - 1));
      this.#pausedUntil = Date.now() + pause;
      // The first failure of a run is worth a warning; the retries that follow are not.
      const level = this.#failures === 1 ? "warn" : "debug";
      this.logger[level]({ err: error, model: this.modelId, pauseMs: pause }, "embedding provider failed; search ranks by words meanwhile");
      throw error;
    }
  }
}

/** The vector scaled to length 1 (so a dot product is the cosine); rejects what is not a vector of numbers. */
function unitVector(values: readonly number[]): Float32Array {
  if (values.length === 0 || !values.every(Number.isFinite))
    throw new Error("the provider sent an embedding that is not a vector of numbers");
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0));
  return Float32Array.from(values, (value) => (norm > 0 ? value / norm : 0));
}

/** Float32 little-endian bytes, as `note_embeddings.vector` holds them. */
export function encodeVector(vector: Float32Array): Uint8Array {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i] as number, true);
  return bytes;
}

export function decodeVector(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(Math.floor(bytes.byteLength / 4));
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}

/** The embedding model the configuration names, or undefined (search ranks by words alone). */
export async function createEmbedder(config: ServerConfig, logger: Logger): Promise<Embedder | undefined> {
  const { embeddingModel, modelProvider, modelBaseUrl, modelApiKey } = config;
  if (!embeddingModel) return undefined;
  if (modelProvider !== "openai-compatible" || !modelBaseUrl) {
    logger.warn(
      { embeddingModel, modelProvider },
      "an embedding model needs the openai-compatible provider and its base URL; search ranks by words alone",
    );
    return undefined;
  }
  const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
  const provider = createOpenAICompatible({ name: "embeddings", baseURL: modelBaseUrl, apiKey: modelApiKey });
  return new Embedder(provider.embeddingModel(embeddingModel), embeddingModel, logger);
}
