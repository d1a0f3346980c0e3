/** A stored organisation. */
export interface OrganizationRecord {
  id: number;
  name: string;
  credits_monthly: number;
  brand_removal: boolean;
  /** Days of inactivity after which conversations are deleted; null keeps them. */
  retention_days: number | null;
  created_at: string;
}

export type NewOrganization = Omit<OrganizationRecord, "id" | "retention_days">;
/** Fields to change; `retention_days: null` clears retention. */
export type OrganizationPatch = Partial<Pick<OrganizationRecord, "name" | "credits_monthly" | "brand_removal" | "retention_days">>;

export interface OrgStore {
  create(org: NewOrganization): Promise<OrganizationRecord>;
  /** Oldest first. */
  list(): Promise<OrganizationRecord[]>;
  find(id: number): Promise<OrganizationRecord | undefined>;
  /** Undefined when there is no such organisation. */
  update(id: number, patch: OrganizationPatch): Promise<OrganizationRecord | undefined>;
  /** True when at least one organisation exists (false on first run). */
  any(): Promise<boolean>;
  /** Whether the organisation bought brand removal; false for an unknown id. Read on every reply. */
  brandRemoval(id: number): Promise<boolean>;
}
