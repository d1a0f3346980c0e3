import { utcMonth } from "./clock.js";
import type { Db } from "./db/open.js";
import { ChatsvcError } from "./errors.js";

/** An organisation's credits for the current UTC month, as `meta` of a send-message reply shows them. */
export interface CreditStatus {
  /** UTC calendar month, `YYYY-MM`. */
  month: string;
  credits_used: number;
  credits_max: number;
  credits_remaining: number;
}

/** Distinct from a future rate-limit 429, so clients can tell "wait a minute" from "wait for next month". */
export const CREDIT_LIMIT_MESSAGE = "Monthly credit limit reached";

export type Credits = ReturnType<typeof createCredits>;

/**
 * Monthly credits per organisation. Reading is free; charging happens inside
 * the caller's write transaction (`BEGIN IMMEDIATE` serialises writers), so the
 * re-check and the increment are one atomic step and concurrent requests can
 * never spend more than the limit.
 *
 * @example
 * const credits = createCredits(db);
 * credits.assertAvailable(orgId, 1); // 429 when exhausted
 * events.transaction(db, (tx) => credits.charge(orgId, 1));
 */
export function createCredits(db: Db) {
  const sqlite = db.$client;
  const limitOf = sqlite.prepare<[number], { credits_monthly: number }>("SELECT credits_monthly FROM organizations WHERE id = ?");
  const usedOf = sqlite.prepare<[number, string], { credits_used: number }>("SELECT credits_used FROM credit_ledger WHERE organization_id = ? AND month = ?");
  const ensureRow = sqlite.prepare<[number, string]>("INSERT INTO credit_ledger (organization_id, month, credits_used) VALUES (?, ?, 0) ON CONFLICT DO NOTHING");
  const add = sqlite.prepare<[number, number, string]>("UPDATE credit_ledger SET credits_used = credits_used + ? WHERE organization_id = ? AND month = ?");
  const setLimit = sqlite.prepare<[number, number]>("UPDATE organizations SET credits_monthly = ? WHERE id = ?");

  const status = (organizationId: number, month = utcMonth()): CreditStatus => {
    const limit = limitOf.get(organizationId);
    if (!limit) throw ChatsvcError.notFound(`Organization ${organizationId} not found`);
    const used = usedOf.get(organizationId, month)?.credits_used ?? 0;
    return { month, credits_used: used, credits_max: limit.credits_monthly, credits_remaining: Math.max(0, limit.credits_monthly - used) };
  };

  // At zero remaining even a free model is refused: the spec makes 0 the end of the month's messages.
  const refuses = (s: CreditStatus, cost: number) => s.credits_remaining <= 0 || s.credits_remaining < cost;

  return {
    /** This month's figures for an organisation. */
    status,

    /** Throws the credit 429 when a message costing `cost` cannot be paid. Writes nothing. */
    assertAvailable(organizationId: number, cost: number): CreditStatus {
      const s = status(organizationId);
      if (refuses(s, cost)) throw new ChatsvcError(429, CREDIT_LIMIT_MESSAGE, { details: { credits: s } });
      return s;
    },

    /**
     * Re-checks and charges; call it inside a write transaction so the check
     * and the increment cannot interleave with another request's. Throws the
     * credit 429 (rolling the transaction back) when the credits ran out meanwhile.
     */
    charge(organizationId: number, cost: number): CreditStatus {
      const month = utcMonth();
      const before = status(organizationId, month);
      if (refuses(before, cost)) throw new ChatsvcError(429, CREDIT_LIMIT_MESSAGE, { details: { credits: before } });
      ensureRow.run(organizationId, month);
      add.run(cost, organizationId, month);
      return status(organizationId, month);
    },

    /** Sets an organisation's monthly credits. */
    setMonthly(organizationId: number, monthly: number): CreditStatus {
      if (!Number.isSafeInteger(monthly) || monthly < 0) throw ChatsvcError.validation({ monthly: ["The monthly field must be a non-negative integer."] });
      if (setLimit.run(monthly, organizationId).changes === 0) throw ChatsvcError.notFound(`Organization ${organizationId} not found`);
      return status(organizationId);
    },
  };
}
