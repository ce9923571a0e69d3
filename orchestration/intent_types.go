package orchestration

// Status is an intent's lifecycle state.
type Status string

const (
	StatusPending    Status = "PENDING"
	StatusInProgress Status = "IN_PROGRESS"
	StatusBlocked    Status = "BLOCKED"
	StatusCompleted  Status = "COMPLETED"
	StatusAbandoned  Status = "ABANDONED"
)

// Intent is one entry of .orchestration/active_intents.yaml.
type Intent struct {
	ID                 string   `yaml:"id" json:"id"`
	Name               string   `yaml:"name" json:"name"`
	Status             Status   `yaml:"status" json:"status"`
	OwnedScope         []string `yaml:"owned_scope" json:"owned_scope"`
	Constraints        []string `yaml:"constraints,omitempty" json:"constraints,omitempty"`
	AcceptanceCriteria []string `yaml:"acceptance_criteria,omitempty" json:"acceptance_criteria,omitempty"`

	// Line is where the intent starts in its file (1-based), for messages.
	Line int `yaml:"-" json:"-"`
}
