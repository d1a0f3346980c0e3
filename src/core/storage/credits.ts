/** An organisation's credits for one UTC month. */
export interface CreditRecord {
  /** `YYYY-MM`. */
  month: string;
  credits_used: number;
  credits_max: number;
}

/** A charge made inside a write transaction (see {@link ConversationStore}). */
export interface Charge {
  organization_id: number;
  month: string;
  cost: number;
}

export interface CreditStore {
  /** Undefined for an unknown organisation; `credits_used` is 0 for a month nothing was charged in. */
  status(organizationId: number, month: string): Promise<CreditRecord | undefined>;
  /** False for an unknown organisation. */
  setMonthly(organizationId: number, monthly: number): Promise<boolean>;
}
