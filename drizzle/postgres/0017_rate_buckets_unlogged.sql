-- Rate buckets are transient (a missing row is a full bucket): unlogged, a take commits without waiting for a WAL flush,
-- which made every API request wait on the disk. After a crash the table comes back empty, i.e. every bucket full.
ALTER TABLE "rate_buckets" SET UNLOGGED;
