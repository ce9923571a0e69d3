package orchestration

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAnalyzeUsage(t *testing.T) {
	r := AnalyzeUsage(map[string]ToolUsage{
		"read_file":       {Attempts: 10, Failures: 1}, // 10%: fine
		"apply_diff":      {Attempts: 5, Failures: 1},  // exactly 20% over 5: problematic
		"execute_command": {Attempts: 2, Failures: 2},  // 100% but only 2 attempts: not yet
		"write_to_file":   {Attempts: 3, Failures: 3},  // 100% over 3: problematic, worst first
		"list_files":      {Attempts: 0, Failures: 0},
		"search_files":    {Attempts: 1, Failures: 7}, // damaged counts are capped
	})
	if r.Total.Attempts != 21 || r.Total.Failures != 8 {
		t.Errorf("total = %+v, want 21 attempts, 8 failures", r.Total)
	}
	var probl []string
	for _, p := range r.Problematic {
		probl = append(probl, p.Tool)
	}
	if len(probl) != 2 || probl[0] != "write_to_file" || probl[1] != "apply_diff" {
		t.Errorf("problematic = %v, want [write_to_file apply_diff]", probl)
	}
	if r.MostUsed[0].Tool != "read_file" || len(r.MostUsed) != MostUsedShown {
		t.Errorf("most used = %+v", r.MostUsed)
	}
	for _, st := range r.Tools {
		switch st.Tool {
		case "read_file":
			if st.SuccessRate != 0.9 {
				t.Errorf("read_file success rate = %v, want 0.9", st.SuccessRate)
			}
		case "list_files":
			if st.SuccessRate != 0 || st.FailureRate != 0 {
				t.Errorf("never-called tool has rates %+v", st)
			}
		case "search_files":
			if st.Failures != 1 || st.SuccessRate != 0 {
				t.Errorf("search_files = %+v, want failures capped at attempts", st)
			}
		}
	}
	if e := AnalyzeUsage(nil); e.Tools == nil || e.Problematic == nil || e.MostUsed == nil {
		t.Error("an empty report must still have empty lists, for its JSON")
	}
}

func TestSumUsage(t *testing.T) {
	dir := t.TempDir()
	store := OpenSessions(dir)
	for i, id := range []string{"a", "b"} {
		if _, err := store.Update(id, func(s *Session) error {
			for j := 0; j <= i; j++ {
				s.CountUse("read_file", j == 0)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	got, n, err := SumUsage(dir)
	if err != nil || n != 2 || got["read_file"] != (ToolUsage{Attempts: 3, Failures: 2}) {
		t.Fatalf("SumUsage = %v, %d, %v; want read_file 3 attempts 2 failures over 2 sessions", got, n, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "junk.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := SumUsage(dir); err == nil {
		t.Error("a damaged session file must be reported, not skipped")
	}
	if m, n, err := SumUsage(filepath.Join(dir, "none")); err != nil || n != 0 || len(m) != 0 {
		t.Errorf("no sessions directory: %v %d %v", m, n, err)
	}
}
