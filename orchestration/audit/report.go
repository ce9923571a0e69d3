package audit

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/intentgate/intentgate/orchestration"
)

//go:embed report.html.tmpl
var reportTemplate string

// ReportOptions says what to report on.
type ReportOptions struct {
	Workspace string
	Ledger    string
	// Intents are the declared intents; IntentsErr why they could not be
	// loaded, shown in the report.
	Intents    []orchestration.Intent
	IntentsErr error
	// Timeline keeps the last this many changes and denials (0: 1000).
	Timeline int
	Progress func(read, total int64)
	Now      time.Time
}

// ReportData is what the report template renders.
type ReportData struct {
	Generated     time.Time
	Ledger        string // relative to the workspace when inside it
	Verify        *VerifyReport
	FirstBad      string
	IntentsErr    string
	Intents       []*ReportIntent
	Drifted       []FileDrift
	Stats         *Stats
	Timeline      []Entry
	TimelineTotal int
}

// ReportIntent is one intent, declared or only named by records.
type ReportIntent struct {
	ID, Name, Status string
	Scope            []string
	Declared         bool
	Changes          int
	Denials          int
	Violations       int
	Files            []*ReportFile
	files            map[string]*ReportFile
}

// ReportFile is a file an intent changed.
type ReportFile struct {
	Path    string
	Changes int
	Ranges  string // of the latest change, "12-20, 31"
	Deleted bool
	Last    time.Time
	Record  string
	Drift   string
}

// Report verifies the ledger and renders a self-contained HTML report of it
// to w: no scripts, no network, styles inline.
func Report(o ReportOptions, w io.Writer) (*ReportData, error) {
	keep := o.Timeline
	if keep <= 0 {
		keep = 1000
	}
	d := &ReportData{Generated: o.Now}
	if d.Generated.IsZero() {
		d.Generated = time.Now()
	}
	d.Generated = d.Generated.UTC().Truncate(time.Second)
	if o.IntentsErr != nil {
		d.IntentsErr = o.IntentsErr.Error()
	}
	byID := map[string]*ReportIntent{}
	for _, in := range o.Intents {
		ri := &ReportIntent{ID: in.ID, Name: in.Name, Status: string(in.Status), Scope: in.OwnedScope, Declared: true, files: map[string]*ReportFile{}}
		byID[in.ID] = ri
		d.Intents = append(d.Intents, ri)
	}
	intents, models, tools := statTable{}, statTable{}, statTable{}
	stats := &Stats{}
	ring := make([]Entry, 0, keep)
	each := func(l *Line) {
		e := EntryOf(l.No, l.Rec)
		stats.Records++
		intents.add(e.Intent, &e)
		models.add(e.Model, &e)
		tools.add(e.Tool, &e)
		if len(ring) < keep {
			ring = append(ring, e)
		} else {
			ring[d.TimelineTotal%keep] = e
		}
		d.TimelineTotal++

		ri := byID[e.Intent]
		if ri == nil {
			ri = &ReportIntent{ID: e.Intent, files: map[string]*ReportFile{}}
			byID[e.Intent] = ri
			d.Intents = append(d.Intents, ri)
		}
		switch {
		case e.IsDenial():
			ri.Denials++
			return
		case e.Decision == orchestration.DecisionViolation || e.Mutation == orchestration.MutationViolation:
			ri.Violations++
		default:
			ri.Changes++
		}
		for _, f := range e.Files {
			rf := ri.files[f.Path]
			if rf == nil {
				rf = &ReportFile{Path: f.Path}
				ri.files[f.Path] = rf
			}
			rf.Changes++
			if e.Time.Before(rf.Last) {
				continue
			}
			rf.Last, rf.Record, rf.Deleted = e.Time, e.ID, e.Mutation == orchestration.MutationDelete
			rf.Ranges = rangesText(f.Ranges)
		}
	}
	vo := VerifyOptions{Workspace: o.Workspace, Ledger: o.Ledger, Progress: o.Progress, each: each}
	rep, err := Verify(vo)
	if err != nil {
		return nil, err
	}
	d.Verify = rep
	if rep.FirstBad != nil {
		d.FirstBad = rep.FirstBad.String()
	}
	ws, ledger := vo.paths()
	d.Ledger = ledger
	if absWS, err := filepath.Abs(ws); err == nil {
		if absL, err := filepath.Abs(ledger); err == nil {
			if rel, err := filepath.Rel(absWS, absL); err == nil && !strings.HasPrefix(rel, "..") {
				d.Ledger = filepath.ToSlash(rel)
			}
		}
	}
	stats.Lines = rep.Lines
	stats.ByIntent, stats.ByModel, stats.ByTool = intents.rows(), models.rows(), tools.rows()
	d.Stats = stats
	drift := map[string]string{}
	for _, f := range rep.Drift {
		drift[f.Path] = f.Status
		if f.Status != DriftUnchanged && f.Status != DriftRemoved {
			d.Drifted = append(d.Drifted, f)
		}
	}
	for _, ri := range d.Intents {
		for _, f := range ri.files {
			f.Drift = drift[f.Path]
			ri.Files = append(ri.Files, f)
		}
		sort.Slice(ri.Files, func(i, j int) bool { return ri.Files[i].Path < ri.Files[j].Path })
	}
	sort.SliceStable(d.Intents, func(i, j int) bool {
		a, b := d.Intents[i], d.Intents[j]
		if a.Declared != b.Declared {
			return a.Declared
		}
		if (a.ID == "") != (b.ID == "") {
			return b.ID == ""
		}
		return a.ID < b.ID
	})
	sort.Slice(ring, func(i, j int) bool {
		if !ring[i].Time.Equal(ring[j].Time) {
			return ring[i].Time.Before(ring[j].Time)
		}
		return ring[i].Line < ring[j].Line
	})
	d.Timeline = ring

	t, err := template.New("report").Funcs(template.FuncMap{
		"time":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"short": ShortID,
		"commit": func(h string) string {
			if len(h) > 12 {
				return h[:12]
			}
			return h
		},
		"join": strings.Join,
		"drift": func(s string) string {
			switch s {
			case DriftUnchanged, DriftHolds, DriftRemoved, "":
				return "ok"
			case DriftMoved:
				return "warn"
			}
			return "bad"
		},
		"status": func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "-")) },
		"ranges": func(f EntryFile) string { return rangesText(f.Ranges) },
	}).Parse(reportTemplate)
	if err != nil {
		return nil, fmt.Errorf("report template: %w", err)
	}
	if err := t.Execute(w, d); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return d, nil
}

func rangesText(rs [][2]int) string {
	if len(rs) == 0 {
		return ""
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = strconv.Itoa(r[0])
		if r[1] != r[0] {
			parts[i] += "-" + strconv.Itoa(r[1])
		}
	}
	return strings.Join(parts, ", ")
}

// ShortID is how log, blame and the report print a record id: its last 12
// hex digits. The first digits of a UUIDv7 are its time in milliseconds, and
// records written close together share them; the last ones are random.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[len(id)-12:]
	}
	return id
}
