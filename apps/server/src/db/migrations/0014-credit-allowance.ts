import type { Kysely } from "kysely";

/**
 * Credits come from the operator's setting unless set for a user: a balance row is either set
 * (`tandem-server credits set`, `allowance_period` null, honoured as it is) or the monthly
 * allowance of the month it names (`2026-11`), refilled when a later month spends from it.
 * Every existing row was set by an operator.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("credits").addColumn("allowance_period", "text").execute();
}
