package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// m0014ExecutionsOutliveAgents drops the execution log's foreign key to
// its agent: an execution is a task's history, and it went with its agent
// (found by a new-user test: deleting an agent emptied the run history of
// the tasks it had worked on, where its chat messages and the runner's own
// records stay). It keeps the agent's id, as a chat message keeps its
// sender's; it still goes with its task and its project. SQLite cannot drop
// a constraint, so the table is made again with the same columns, checks
// and indexes.
func m0014ExecutionsOutliveAgents() *gormigrate.Migration {
	remake := func(tx *gorm.DB, agentFK string) error {
		for _, q := range []string{
			"CREATE TABLE `execution_logs__new` (`id` text,`task_id` text NOT NULL,`agent_id` text NOT NULL,`project_id` text NOT NULL," +
				"`status` text NOT NULL,`started_at` datetime NOT NULL,`completed_at` datetime,`exit_code` integer," +
				"`log_file_path` text NOT NULL DEFAULT \"\",PRIMARY KEY (`id`)," +
				"CONSTRAINT `fk_execution_logs_task` FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON DELETE CASCADE," + agentFK +
				"CONSTRAINT `fk_execution_logs_project` FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON DELETE CASCADE," +
				"CONSTRAINT `chk_execution_logs_status` CHECK (status IN ('running','completed','failed','stopped')))",
			"INSERT INTO `execution_logs__new` (id, task_id, agent_id, project_id, status, started_at, completed_at, exit_code, log_file_path) " +
				"SELECT id, task_id, agent_id, project_id, status, started_at, completed_at, exit_code, log_file_path FROM `execution_logs`",
			"DROP TABLE `execution_logs`",
			"ALTER TABLE `execution_logs__new` RENAME TO `execution_logs`",
			"CREATE INDEX `idx_execution_logs_agent` ON `execution_logs`(`agent_id`,`started_at`)",
			"CREATE INDEX `idx_execution_logs_task_id` ON `execution_logs`(`task_id`)",
		} {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		return nil
	}
	return &gormigrate.Migration{
		ID: "0014_executions_outlive_agents",
		Migrate: func(tx *gorm.DB) error {
			return remake(tx, "")
		},
		Rollback: func(tx *gorm.DB) error {
			// Executions of agents deleted since cannot keep the key.
			if err := tx.Exec("DELETE FROM `execution_logs` WHERE agent_id NOT IN (SELECT id FROM agents)").Error; err != nil {
				return err
			}
			return remake(tx, "CONSTRAINT `fk_execution_logs_agent` FOREIGN KEY (`agent_id`) REFERENCES `agents`(`id`) ON DELETE CASCADE,")
		},
	}
}
