CREATE TABLE `api_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`operator_id` text NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text,
	FOREIGN KEY (`operator_id`) REFERENCES `operators`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_token_hash_idx` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE TABLE `approval_decisions` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`gate_id` text NOT NULL,
	`operator_id` text NOT NULL,
	`username` text NOT NULL,
	`decision` text NOT NULL,
	`reason` text NOT NULL,
	`decided_at` text NOT NULL,
	`package_digest` text NOT NULL,
	`execution_closure_digest` text NOT NULL,
	`sealed_receipt_id` text,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approval_decisions_vote_idx` ON `approval_decisions` (`run_id`,`gate_id`,`operator_id`);--> statement-breakpoint
CREATE INDEX `approval_decisions_run_idx` ON `approval_decisions` (`run_id`,`gate_id`);--> statement-breakpoint
CREATE TABLE `gate_policies` (
	`skill_name` text NOT NULL,
	`gate_id` text NOT NULL,
	`required_approvals` integer DEFAULT 1 NOT NULL,
	`forbid_initiator` integer DEFAULT true NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`skill_name`, `gate_id`)
);
--> statement-breakpoint
CREATE TABLE `operators` (
	`id` text PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`role` text NOT NULL,
	`password_hash` text NOT NULL,
	`password_salt` text NOT NULL,
	`password_params` text NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	CONSTRAINT "operators_role_check" CHECK("operators"."role" in ('viewer', 'approver', 'admin'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `operators_username_idx` ON `operators` (`username`);--> statement-breakpoint
CREATE TABLE `run_initiators` (
	`run_id` text PRIMARY KEY NOT NULL,
	`operator_id` text NOT NULL,
	`username` text NOT NULL,
	`created_at` text NOT NULL
);
