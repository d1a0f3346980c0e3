import type { Charge, CreditRecord, CreditStore } from "../../core/storage/index.js";
import type { Sqlite } from "./open.js";

/** Credits reading, and the charge that runs inside the send-message transactions. */
export function createCredits(sqlite: Sqlite) {
  const limitOf = sqlite.prepare<[number], number>("SELECT credits_monthly FROM organizations WHERE id = ?").pluck();
  const usedOf = sqlite.prepare<[number, string], number>("SELECT credits_used FROM credit_ledger WHERE organization_id = ? AND month = ?").pluck();
  const add = sqlite.prepare<[number, string, number]>(
    `INSERT INTO credit_ledger (organization_id, month, credits_used) VALUES (?, ?, ?)
     ON CONFLICT (organization_id, month) DO UPDATE SET credits_used = credits_used + excluded.credits_used`,
  );
  const setLimit = sqlite.prepare<[number, number]>("UPDATE organizations SET credits_monthly = ? WHERE id = ?");

  const status = (organizationId: number, month: string): CreditRecord | undefined => {
    const max = limitOf.get(organizationId);
    if (max === undefined) return undefined;
    return { month, credits_used: usedOf.get(organizationId, month) ?? 0, credits_max: max };
  };

  /**
   * Inside a write transaction: charges when the credits allow it, returning the
   * figures after the charge, or `refused` with the figures as they are. At
   * zero remaining even a free model is refused: 0 is the end of the month's messages.
   */
  const charge = ({ organization_id, month, cost }: Charge): { ok: true; credits: CreditRecord } | { ok: false; credits: CreditRecord } => {
    const before = status(organization_id, month) ?? { month, credits_used: 0, credits_max: 0 };
    const remaining = before.credits_max - before.credits_used;
    if (remaining <= 0 || remaining < cost) return { ok: false, credits: before };
    add.run(organization_id, month, cost);
    return { ok: true, credits: { ...before, credits_used: before.credits_used + cost } };
  };

  const store: CreditStore = {
    async status(organizationId, month) {
      return status(organizationId, month);
    },
    async setMonthly(organizationId, monthly) {
      return setLimit.run(monthly, organizationId).changes > 0;
    },
  };
  return { store, charge };
}
