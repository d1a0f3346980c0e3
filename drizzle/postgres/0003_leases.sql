CREATE TABLE "leases" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_ms" double precision NOT NULL,
	"last_run_ms" double precision
);
