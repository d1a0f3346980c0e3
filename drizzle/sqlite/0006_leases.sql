CREATE TABLE `leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`expires_ms` integer NOT NULL,
	`last_run_ms` integer
);
