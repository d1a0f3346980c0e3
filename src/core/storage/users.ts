/** A stored user; `email` is stored lower-case. */
export interface UserRecord {
  id: number;
  organization_id: number;
  email: string;
  name: string | null;
  created_at: string;
}

export type NewUser = Omit<UserRecord, "id">;

export interface UserStore {
  /** One transaction: checks the organisation exists and the e-mail is free, then inserts. */
  create(user: NewUser): Promise<UserRecord | "no-organization" | "email-taken">;
  /** Of one organisation, or all; oldest first. */
  list(organizationId?: number): Promise<UserRecord[]>;
  find(id: number): Promise<UserRecord | undefined>;
  /** `email` must already be normalised (trimmed, lower-case). */
  findByEmail(email: string): Promise<UserRecord | undefined>;
}
