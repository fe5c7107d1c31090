CREATE TABLE "bootstrap_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (6) with time zone NOT NULL,
	"redeemed_at" timestamp (6) with time zone,
	"redeemed_by" text,
	CONSTRAINT "bootstrap_tokens_token_hash_key" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "change_counter" (
	"id" integer PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL,
	CONSTRAINT "change_counter_single_row" CHECK ("change_counter"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "changes" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"run_id" text NOT NULL,
	"status" text NOT NULL,
	"at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "operators" (
	"id" text PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"role" text NOT NULL,
	"password_hash" text NOT NULL,
	"password_salt" text NOT NULL,
	"password_params" text NOT NULL,
	"disabled" boolean DEFAULT false NOT NULL,
	"created_at" text NOT NULL,
	CONSTRAINT "operators_role_check" CHECK ("operators"."role" in ('viewer', 'approver', 'admin'))
);
--> statement-breakpoint
CREATE TABLE "receipt_index" (
	"receipt_id" text PRIMARY KEY NOT NULL,
	"run_id" text,
	"skill_name" text NOT NULL,
	"disposition" text NOT NULL,
	"created_at" text NOT NULL,
	"file_name" text NOT NULL,
	"is_child" boolean DEFAULT false NOT NULL,
	"harness" boolean DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE TABLE "receipts" (
	"id" text PRIMARY KEY NOT NULL,
	"bytes" "bytea" NOT NULL,
	"stored_at" timestamp (6) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "receipts_id_check" CHECK ("receipts"."id" ~ '^sha256:[0-9a-f]{64}$')
);
--> statement-breakpoint
CREATE TABLE "run_ledger" (
	"run_id" text NOT NULL,
	"idx" integer NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"step_id" text,
	"entry_json" text NOT NULL,
	"previous_hash" text NOT NULL,
	"entry_hash" text NOT NULL,
	"created_at" text NOT NULL,
	"fence" bigint NOT NULL,
	CONSTRAINT "run_ledger_run_id_idx_pk" PRIMARY KEY("run_id","idx")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"skill_name" text NOT NULL,
	"runner" text NOT NULL,
	"skill_ref" text NOT NULL,
	"package_dir" text NOT NULL,
	"package_digest" text NOT NULL,
	"execution_closure_digest" text,
	"status" text NOT NULL,
	"disposition" text,
	"receipt_id" text,
	"inputs_digest" text NOT NULL,
	"result_json" text,
	"requests_json" text,
	"error_json" text,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL,
	"created_ms" bigint NOT NULL,
	"outcome" text DEFAULT 'running' NOT NULL,
	"job_state" text DEFAULT 'local' NOT NULL,
	"queued_at" timestamp (6) with time zone,
	"lease_owner" text,
	"lease_expires_at" timestamp (6) with time zone,
	"fence" bigint DEFAULT 0 NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"cancel_requested_at" timestamp (6) with time zone,
	CONSTRAINT "runs_status_check" CHECK ("runs"."status" in ('running', 'sealed', 'needs_agent', 'needs_approval', 'failure')),
	CONSTRAINT "runs_job_state_check" CHECK ("runs"."job_state" in ('local', 'queued', 'leased', 'parked', 'done')),
	CONSTRAINT "runs_lease_check" CHECK (("runs"."job_state" = 'leased') = ("runs"."lease_owner" is not null and "runs"."lease_expires_at" is not null))
);
--> statement-breakpoint
CREATE TABLE "steps" (
	"ord" bigint GENERATED ALWAYS AS IDENTITY (sequence name "steps_ord_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"run_id" text NOT NULL,
	"step_id" text NOT NULL,
	"status" text NOT NULL,
	"attempt" integer DEFAULT 1 NOT NULL,
	"receipt_id" text,
	"output_json" text,
	"started_at" text,
	"finished_at" text,
	CONSTRAINT "steps_run_id_step_id_pk" PRIMARY KEY("run_id","step_id")
);
--> statement-breakpoint
ALTER TABLE "run_ledger" ADD CONSTRAINT "run_ledger_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "steps" ADD CONSTRAINT "steps_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "changes_run_id_idx" ON "changes" USING btree ("run_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "operators_username_idx" ON "operators" USING btree ("username");--> statement-breakpoint
CREATE INDEX "receipt_index_created_at_idx" ON "receipt_index" USING btree ("created_at","receipt_id");--> statement-breakpoint
CREATE INDEX "receipt_index_run_id_idx" ON "receipt_index" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "runs_created_ms_id_idx" ON "runs" USING btree ("created_ms","id");--> statement-breakpoint
CREATE INDEX "runs_status_idx" ON "runs" USING btree ("status","created_ms","id");--> statement-breakpoint
CREATE INDEX "runs_skill_name_idx" ON "runs" USING btree ("skill_name","created_ms","id");--> statement-breakpoint
CREATE INDEX "runs_updated_at_idx" ON "runs" USING btree ("updated_at","id");--> statement-breakpoint
CREATE INDEX "runs_outcome_idx" ON "runs" USING btree ("outcome","created_ms","id");--> statement-breakpoint
CREATE INDEX "runs_claimable_idx" ON "runs" USING btree ("queued_at","id") WHERE "runs"."job_state" in ('queued', 'leased');