import { utcMonth } from "./clock.js";
import { ChatsvcError } from "./errors.js";
import type { CreditRecord, CreditStore } from "./storage/index.js";

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

/** The status a stored record shows. */
export function toCreditStatus(record: CreditRecord): CreditStatus {
  return { ...record, credits_remaining: Math.max(0, record.credits_max - record.credits_used) };
}

/** The credit 429, with the figures that refused the message. */
export function creditLimitError(record: CreditRecord): ChatsvcError {
  return new ChatsvcError(429, CREDIT_LIMIT_MESSAGE, { details: { credits: toCreditStatus(record) } });
}

export type Credits = ReturnType<typeof createCredits>;

/**
 * Monthly credits per organisation. Reading is free; the charge happens inside
 * the storage write that stores the reply (`ConversationStore.storeTurn`), so
 * the re-check and the increment are one atomic step and concurrent requests
 * can never spend more than the limit.
 *
 * @example
 * const credits = createCredits(storage.credits);
 * await credits.assertAvailable(orgId, 1); // 429 when exhausted
 */
export function createCredits(store: CreditStore) {
  const status = async (organizationId: number, month = utcMonth()): Promise<CreditStatus> => {
    const record = await store.status(organizationId, month);
    if (!record) throw ChatsvcError.notFound(`Organization ${organizationId} not found`);
    return toCreditStatus(record);
  };

  return {
    /** This month's figures for an organisation. */
    status,

    /**
     * Throws the credit 429 when a message costing `cost` cannot be paid. Writes
     * nothing. At zero remaining even a free model is refused: the spec makes 0
     * the end of the month's messages.
     */
    async assertAvailable(organizationId: number, cost: number): Promise<CreditStatus> {
      const s = await status(organizationId);
      if (s.credits_remaining <= 0 || s.credits_remaining < cost) throw creditLimitError(s);
      return s;
    },

    /** Sets an organisation's monthly credits. */
    async setMonthly(organizationId: number, monthly: number): Promise<CreditStatus> {
      if (!Number.isSafeInteger(monthly) || monthly < 0) throw ChatsvcError.validation({ monthly: ["The monthly field must be a non-negative integer."] });
      if (!(await store.setMonthly(organizationId, monthly))) throw ChatsvcError.notFound(`Organization ${organizationId} not found`);
      return status(organizationId);
    },
  };
}
