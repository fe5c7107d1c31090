CREATE TABLE `console_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`operator_id` text NOT NULL,
	`created_at` text NOT NULL,
	`last_seen_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`operator_id`) REFERENCES `operators`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `console_sessions_operator_idx` ON `console_sessions` (`operator_id`);--> statement-breakpoint
CREATE INDEX `console_sessions_expires_at_idx` ON `console_sessions` (`expires_at`);