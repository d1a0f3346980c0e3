/** What `leases.acquire` is asked for. */
export interface LeaseRequest {
  /** How long the lease holds unless renewed or released: a holder that dies frees it after this. */
  ttlMs: number;
  /**
   * Only take the lease when the last completed run (see `release`) is at least this old:
   * a periodic job that every instance schedules then runs once per period, not once per instance.
   */
  minIntervalMs?: number;
}

/**
 * Named leases for background jobs that one instance at a time should run
 * (retention, web-source sync) when several share a database. Times are the
 * database's clock where instances share one (PostgreSQL).
 */
export interface LeaseStore {
  /**
   * Takes `name` for `holder` when it is free, expired, or already the holder's
   * (which renews it), and answers whether `holder` now holds it.
   */
  acquire(name: string, holder: string, request: LeaseRequest): Promise<boolean>;
  /**
   * Frees `name` if `holder` holds it; `completed` records the run's end, which
   * `minIntervalMs` counts from. A lease held by someone else is left alone.
   */
  release(name: string, holder: string, completed?: boolean): Promise<void>;
}
