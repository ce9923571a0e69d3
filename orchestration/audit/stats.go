package audit

import (
	"sort"

	"github.com/intentgate/intentgate/orchestration"
)

// StatRow is what the ledger says about one intent, model or tool.
type StatRow struct {
	Key          string         `json:"key"`
	Records      int            `json:"records"`
	Changes      int            `json:"changes"`
	LinesAdded   int            `json:"lines_added"` // lines inside recorded ranges
	FilesTouched int            `json:"files_touched"`
	Violations   int            `json:"violations,omitempty"`
	Denials      int            `json:"denials"`
	DenialCodes  map[string]int `json:"denials_by_code,omitempty"`

	files map[string]bool
}

// Stats is the ledger counted per intent, model and tool.
type Stats struct {
	Lines      int       `json:"lines"`
	Records    int       `json:"records"`
	Unparsable int       `json:"unparsable,omitempty"`
	ByIntent   []StatRow `json:"by_intent"`
	ByModel    []StatRow `json:"by_model"`
	ByTool     []StatRow `json:"by_tool"`
}

type statTable map[string]*StatRow

func (t statTable) add(key string, e *Entry) {
	r := t[key]
	if r == nil {
		r = &StatRow{Key: key, files: map[string]bool{}, DenialCodes: map[string]int{}}
		t[key] = r
	}
	r.Records++
	switch {
	case e.IsDenial():
		r.Denials++
		code := e.Denial
		if code == "" {
			code = "(none)"
		}
		r.DenialCodes[code]++
		return
	case e.Decision == orchestration.DecisionViolation || e.Mutation == orchestration.MutationViolation:
		r.Violations++
	}
	r.Changes++
	for _, f := range e.Files {
		r.LinesAdded += f.Lines
		r.files[f.Path] = true
	}
}

func (t statTable) rows() []StatRow {
	out := make([]StatRow, 0, len(t))
	for _, r := range t {
		r.FilesTouched = len(r.files)
		if len(r.DenialCodes) == 0 {
			r.DenialCodes = nil
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// ComputeStats reads the whole ledger once. Records without an intent, model
// or tool are counted under "".
func ComputeStats(ledger string, progress func(read int64)) (*Stats, error) {
	s := &Stats{}
	intents, models, tools := statTable{}, statTable{}, statTable{}
	err := Scan(ledger, ScanOptions{Parse: true, NoSum: true, Progress: progress}, func(l *Line) error {
		if !l.Complete {
			return nil
		}
		s.Lines++
		if l.Rec == nil {
			s.Unparsable++
			return nil
		}
		s.Records++
		e := EntryOf(l.No, l.Rec)
		intents.add(e.Intent, &e)
		models.add(e.Model, &e)
		tools.add(e.Tool, &e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.ByIntent, s.ByModel, s.ByTool = intents.rows(), models.rows(), tools.rows()
	return s, nil
}
