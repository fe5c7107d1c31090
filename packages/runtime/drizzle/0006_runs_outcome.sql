ALTER TABLE `runs` ADD `outcome` text DEFAULT 'running' NOT NULL;--> statement-breakpoint
-- Existing runs get the outcome deriveDetailedOutcome (src/run/envelope.ts) gives them; from
-- here on the state store writes it with every change of status, disposition or requests.
UPDATE `runs` SET `outcome` = CASE
  WHEN `status` = 'running' THEN 'running'
  WHEN `status` = 'needs_approval' THEN 'paused_for_approval'
  WHEN `status` = 'needs_agent' THEN CASE
    WHEN NOT EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(`requests_json`) THEN `requests_json` ELSE '[]' END) AS r WHERE json_extract(r.value, '$.kind') = 'agent_act')
      AND EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(`requests_json`) THEN `requests_json` ELSE '[]' END) AS r WHERE json_extract(r.value, '$.kind') = 'input')
    THEN 'paused_for_input'
    ELSE 'paused_for_agent'
  END
  WHEN `status` = 'sealed' AND `disposition` = 'closed' THEN 'completed'
  WHEN `disposition` IN ('blocked', 'declined', 'killed', 'timed_out', 'superseded') THEN `disposition`
  ELSE 'failed'
END;--> statement-breakpoint
CREATE INDEX `runs_outcome_idx` ON `runs` (`outcome`,`created_ms`,`id`);--> statement-breakpoint
CREATE INDEX `runs_skill_outcome_idx` ON `runs` (`skill_name`,`outcome`,`created_ms`,`id`);
