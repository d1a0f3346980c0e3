import type pg from "pg";
import type { Charge, CreditRecord, CreditStore } from "../../core/storage/index.js";
import { one, run, statement, type Queryable } from "./client.js";

const status = statement(
  "credits_status",
  `SELECT $2::text AS month, coalesce(l.credits_used, 0) AS credits_used, o.credits_monthly AS credits_max
     FROM organizations o LEFT JOIN credit_ledger l ON l.organization_id = o.id AND l.month = $2 WHERE o.id = $1`,
);
const setMonthly = statement("credits_set_monthly", "UPDATE organizations SET credits_monthly = $2 WHERE id = $1");
/*
 * The charge is one conditional upsert: the month's row is created or incremented
 * only while the organisation has credits left and the cost fits. ON CONFLICT
 * locks the row and re-checks the condition on its latest version, so instances
 * charging at once queue on it and never spend past the limit. As two CTEs (`org`
 * and `charge`, its answer), with their parameters' numbers, so a turn's write can
 * charge in the same statement, only `when` its other CTEs allow it.
 */
export const CHARGE = (org: number, month: number, cost: number, when = "true") => `org AS (SELECT credits_monthly FROM organizations WHERE id = $${org} AND ${when}),
   charge AS (
     INSERT INTO credit_ledger AS l (organization_id, month, credits_used)
       SELECT $${org}, $${month}, $${cost} FROM org WHERE org.credits_monthly > 0 AND $${cost} <= org.credits_monthly
     ON CONFLICT (organization_id, month) DO UPDATE SET credits_used = l.credits_used + excluded.credits_used
       WHERE l.credits_used < (SELECT credits_monthly FROM org) AND l.credits_used + excluded.credits_used <= (SELECT credits_monthly FROM org)
     RETURNING l.month, l.credits_used, (SELECT credits_monthly FROM org) AS credits_max
   )`;
const charge = statement("credits_charge", `WITH ${CHARGE(1, 2, 3)} SELECT * FROM charge`);

export const creditStatus = (q: Queryable, organizationId: number, month: string) => one<CreditRecord>(q, status, [organizationId, month]);

/** The month's figures that refused a charge (an organisation gone meanwhile has none left). */
export const refusingCredits = async (q: Queryable, organizationId: number, month: string): Promise<CreditRecord> =>
  (await creditStatus(q, organizationId, month)) ?? { month, credits_used: 0, credits_max: 0 };

/**
 * Charges inside the caller's transaction; the month's figures after the charge,
 * or `refused` with the figures that refused it.
 */
export async function chargeCredits(tx: Queryable, { organization_id, month, cost }: Charge): Promise<{ charged: CreditRecord } | { refused: CreditRecord }> {
  const charged = await one<CreditRecord>(tx, charge, [organization_id, month, cost]);
  if (charged) return { charged };
  return { refused: await refusingCredits(tx, organization_id, month) };
}

export function createPgCreditStore(pool: pg.Pool): CreditStore {
  return {
    status: (organizationId, month) => creditStatus(pool, organizationId, month),
    setMonthly: async (organizationId, monthly) => (await run(pool, setMonthly, [organizationId, monthly])) > 0,
  };
}
