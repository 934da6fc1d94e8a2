import type { Kysely } from "kysely";
import type { Adapter, AdapterPayload } from "oidc-provider";
import type { Schema } from "../db/schema";

/**
 * oidc-provider's storage on our database: one `oauth_models` row per (model, id), the payload as
 * JSON, and the fields the provider looks rows up by in columns of their own. Expired rows are
 * never answered (and are swept by maintenance), so the provider sees the same thing whichever
 * instance wrote them.
 */
export class KyselyOAuthAdapter implements Adapter {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const now = Date.now();
    const row = {
      payload: JSON.stringify(payload),
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      account_id: payload.accountId ?? null,
      client_id: payload.clientId ?? null,
      expires_at: expiresIn ? now + expiresIn * 1000 : null,
    };
    await this.db
      .insertInto("oauth_models")
      .values({ model: this.model, id, created_at: now, ...row })
      .onConflict((oc) => oc.columns(["model", "id"]).doUpdateSet(row))
      .execute();
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.#findBy("id", id);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.#findBy("uid", uid);
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.#findBy("user_code", userCode);
  }

  async consume(id: string): Promise<void> {
    await this.db
      .updateTable("oauth_models")
      .set({ consumed_at: Date.now() })
      .where("model", "=", this.model)
      .where("id", "=", id)
      .execute();
  }

  async destroy(id: string): Promise<void> {
    await this.db.deleteFrom("oauth_models").where("model", "=", this.model).where("id", "=", id).execute();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db.deleteFrom("oauth_models").where("model", "=", this.model).where("grant_id", "=", grantId).execute();
  }

  async #findBy(column: "id" | "uid" | "user_code", value: string): Promise<AdapterPayload | undefined> {
    if (typeof value !== "string" || value.length > 512) return undefined;
    const row = await this.db
      .selectFrom("oauth_models")
      .select(["payload", "consumed_at", "expires_at"])
      .where("model", "=", this.model)
      .where(column, "=", value)
      .executeTakeFirst();
    if (!row || (row.expires_at !== null && row.expires_at <= Date.now())) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    // The provider detects refresh token reuse by this flag: a consumed token presented again revokes its grant.
    return row.consumed_at === null ? payload : { ...payload, consumed: Math.floor(row.consumed_at / 1000) };
  }
}

/** Drops what has expired; maintenance runs it. */
export async function deleteExpiredOAuthRows(db: Kysely<Schema>): Promise<void> {
  await db.deleteFrom("oauth_models").where("expires_at", "<=", Date.now()).execute();
}
