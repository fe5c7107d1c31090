CREATE TABLE `receipt_index` (
	`receipt_id` text PRIMARY KEY NOT NULL,
	`run_id` text,
	`skill_name` text NOT NULL,
	`disposition` text NOT NULL,
	`created_at` text NOT NULL,
	`file_name` text NOT NULL,
	`is_child` integer DEFAULT false NOT NULL,
	`harness` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX `receipt_index_created_at_idx` ON `receipt_index` (`created_at`,`receipt_id`);--> statement-breakpoint
CREATE INDEX `receipt_index_run_id_idx` ON `receipt_index` (`run_id`);--> statement-breakpoint
CREATE TABLE `run_ledger` (
	`run_id` text NOT NULL,
	`idx` integer NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`step_id` text,
	`entry_json` text NOT NULL,
	`previous_hash` text NOT NULL,
	`entry_hash` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`run_id`, `idx`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`skill_name` text NOT NULL,
	`runner` text NOT NULL,
	`skill_ref` text NOT NULL,
	`package_dir` text NOT NULL,
	`package_digest` text NOT NULL,
	`execution_closure_digest` text,
	`status` text NOT NULL,
	`disposition` text,
	`receipt_id` text,
	`inputs_digest` text NOT NULL,
	`result_json` text,
	`requests_json` text,
	`error_json` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`created_ms` integer NOT NULL,
	CONSTRAINT "runs_status_check" CHECK("runs"."status" in ('running', 'sealed', 'needs_agent', 'needs_approval', 'failure'))
);
--> statement-breakpoint
CREATE INDEX `runs_created_ms_id_idx` ON `runs` (`created_ms`,`id`);--> statement-breakpoint
CREATE INDEX `runs_status_idx` ON `runs` (`status`,`created_ms`,`id`);--> statement-breakpoint
CREATE INDEX `runs_skill_name_idx` ON `runs` (`skill_name`,`created_ms`,`id`);--> statement-breakpoint
CREATE TABLE `steps` (
	`run_id` text NOT NULL,
	`step_id` text NOT NULL,
	`status` text NOT NULL,
	`attempt` integer DEFAULT 1 NOT NULL,
	`receipt_id` text,
	`output_json` text,
	`started_at` text,
	`finished_at` text,
	PRIMARY KEY(`run_id`, `step_id`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
