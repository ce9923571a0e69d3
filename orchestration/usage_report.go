package orchestration

import (
	"sort"
)

// Problematic tools fail at least this often over at least this many
// attempts, the thresholds the agent's tool analytics use.
const (
	ProblematicFailureRate = 0.2
	ProblematicMinAttempts = 3
)

// ToolStat is one tool's calls and how they went.
type ToolStat struct {
	Tool        string  `json:"tool"`
	Attempts    int     `json:"attempts"`
	Failures    int     `json:"failures"`
	SuccessRate float64 `json:"success_rate"` // successes / attempts, 0 when never called
	FailureRate float64 `json:"failure_rate"`
}

// UsageReport is the analysis of tool usage: every tool by name, the most
// used first, and the problematic ones (worst first).
type UsageReport struct {
	Tools       []ToolStat `json:"tools"`
	Total       ToolStat   `json:"total"`
	MostUsed    []ToolStat `json:"most_used"`
	Problematic []ToolStat `json:"problematic"`
}

// MostUsedShown is how many tools a report lists as the most used.
const MostUsedShown = 5

// AnalyzeUsage turns per-tool counts into a report. Failures above attempts
// (a damaged file) are capped, negative counts read as zero.
func AnalyzeUsage(usage map[string]ToolUsage) UsageReport {
	r := UsageReport{Tools: []ToolStat{}, MostUsed: []ToolStat{}, Problematic: []ToolStat{}, Total: ToolStat{Tool: "total"}}
	for name, u := range usage {
		st := toolStat(name, u.Attempts, u.Failures)
		r.Tools = append(r.Tools, st)
		r.Total.Attempts += st.Attempts
		r.Total.Failures += st.Failures
	}
	r.Total = toolStat("total", r.Total.Attempts, r.Total.Failures)
	sort.Slice(r.Tools, func(i, j int) bool { return r.Tools[i].Tool < r.Tools[j].Tool })
	used := append([]ToolStat(nil), r.Tools...)
	sort.SliceStable(used, func(i, j int) bool { return used[i].Attempts > used[j].Attempts })
	for _, st := range used {
		if st.Attempts > 0 && len(r.MostUsed) < MostUsedShown {
			r.MostUsed = append(r.MostUsed, st)
		}
		if st.Attempts >= ProblematicMinAttempts && st.FailureRate >= ProblematicFailureRate {
			r.Problematic = append(r.Problematic, st)
		}
	}
	sort.SliceStable(r.Problematic, func(i, j int) bool { return r.Problematic[i].FailureRate > r.Problematic[j].FailureRate })
	return r
}

func toolStat(name string, attempts, failures int) ToolStat {
	attempts, failures = max(attempts, 0), max(failures, 0)
	failures = min(failures, attempts)
	st := ToolStat{Tool: name, Attempts: attempts, Failures: failures}
	if attempts > 0 {
		st.FailureRate = float64(failures) / float64(attempts)
		st.SuccessRate = 1 - st.FailureRate
	}
	return st
}

// SumUsage adds up the tool usage of every session stored in dir. A
// session file that cannot be read is an error naming it: a count that
// silently skips sessions would understate failures.
func SumUsage(dir string) (map[string]ToolUsage, int, error) {
	sessions, err := OpenSessions(dir).List()
	if err != nil {
		return nil, 0, err
	}
	total := map[string]ToolUsage{}
	for _, s := range sessions {
		for tool, u := range s.Usage {
			t := total[tool]
			t.Attempts += u.Attempts
			t.Failures += u.Failures
			total[tool] = t
		}
	}
	return total, len(sessions), nil
}
