package orchestration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/intentgate/intentgate/internal/fsx"
)

// File names of the intent map in .orchestration/. The summary and the lock
// are derived and local: they can be deleted (and left out of git) at any
// time; the summary is rebuilt from the ledger when it is missing, damaged or
// does not match the ledger.
const (
	IntentMapName        = "intent_map.md"
	IntentMapSummaryName = "intent_map.json"
	IntentMapLockName    = "intent_map.lock"
)

// intentMapFormat is the version of the summary file's format.
const intentMapFormat = 1

// IntentMapSummary is everything intent_map.md is rendered from, folded from
// the ledger one record at a time so that an update never rereads it.
type IntentMapSummary struct {
	Format int `json:"format"`
	// Records is the number of ledger lines folded in (Skipped of them
	// unparsable), Offset the number of bytes, and LastLine the chain link
	// ("sha256:…") of the last of them, "" for none. Together they tell
	// whether the ledger still starts with what was folded.
	Records  int    `json:"records"`
	Skipped  int    `json:"skipped,omitempty"`
	Offset   int64  `json:"offset"`
	LastLine string `json:"last_line"`
	// Intents is keyed by intent id; "" holds records without an intent.
	Intents map[string]*IntentMapIntent `json:"intents"`
}

// IntentMapIntent is what the ledger says about one intent.
type IntentMapIntent struct {
	Files      map[string]*IntentMapEntry `json:"files,omitempty"` // by path
	Denials    int                        `json:"denials,omitempty"`
	Violations int                        `json:"violations,omitempty"`
}

// IntentMapEntry is an intent's latest change of one file.
type IntentMapEntry struct {
	Ranges  []Range   `json:"ranges"`
	Deleted bool      `json:"deleted,omitempty"`
	Trace   string    `json:"trace"` // the record id
	Time    time.Time `json:"time"`
}

func newIntentMapSummary() *IntentMapSummary {
	return &IntentMapSummary{Format: intentMapFormat, Intents: map[string]*IntentMapIntent{}}
}

// fold adds one record. Denials and violations are counted, not treated as
// the intent's changes. For each file the record with the latest timestamp
// wins, the later line on a tie, so a union-merged ledger reads as expected.
func (s *IntentMapSummary) fold(rec *Record) {
	id := rec.Intent()
	in := s.Intents[id]
	if in == nil {
		in = &IntentMapIntent{}
		s.Intents[id] = in
	}
	decision, mutation := DecisionAllow, ""
	if rec.Meta != nil {
		decision, mutation = rec.Meta.Decision, rec.Meta.Mutation
	}
	switch {
	case decision == DecisionDeny || mutation == MutationDenial:
		in.Denials++
		return
	case decision == DecisionViolation || mutation == MutationViolation:
		in.Violations++
		return
	}
	for _, f := range rec.Files {
		if cur := in.Files[f.Path]; cur != nil && rec.Timestamp.Before(cur.Time) {
			continue
		}
		e := &IntentMapEntry{Ranges: []Range{}, Deleted: mutation == MutationDelete, Trace: rec.ID, Time: rec.Timestamp}
		for _, c := range f.Conversations {
			for _, r := range c.Ranges {
				e.Ranges = append(e.Ranges, Range{StartLine: r.StartLine, EndLine: r.EndLine, ContentHash: r.ContentHash})
			}
		}
		sort.SliceStable(e.Ranges, func(a, b int) bool { return e.Ranges[a].StartLine < e.Ranges[b].StartLine })
		if in.Files == nil {
			in.Files = map[string]*IntentMapEntry{}
		}
		in.Files[f.Path] = e
	}
}

// catchUp folds the complete lines of the ledger after s.Offset. When the
// line there is hint (the line the caller just appended), hintRec is used
// instead of parsing it again. It reports whether anything was folded.
func (s *IntentMapSummary) catchUp(ledger io.ReadSeeker, hintRec *Record, hint []byte) (bool, error) {
	if _, err := ledger.Seek(s.Offset, io.SeekStart); err != nil {
		return false, fmt.Errorf("intent map: %w", err)
	}
	folded := false
	err := ledgerLines(ledger, func(raw []byte, size int, complete bool) error {
		if !complete {
			return nil // a torn tail or an append in progress: later
		}
		rec := hintRec
		if rec == nil || !bytes.Equal(raw, hint) {
			var err error
			if rec, err = ReadLedgerLine(raw); err != nil {
				rec = nil
			}
		}
		if rec != nil {
			s.fold(rec)
		} else {
			s.Skipped++
		}
		s.Records++
		s.Offset += int64(size)
		s.LastLine = ledgerLineHash(raw)
		folded = true
		return nil
	})
	return folded, err
}

// matches reports whether the ledger still holds what s folded: the line
// ending at s.Offset is the one s folded last.
func (s *IntentMapSummary) matches(ledger io.ReaderAt, size int64) (bool, error) {
	if s.Offset == 0 {
		return s.Records == 0 && s.LastLine == "", nil
	}
	if s.Offset > size {
		return false, nil
	}
	last, ok, complete, _, err := ledgerTail(ledger, s.Offset)
	if err != nil {
		return false, err
	}
	return ok && complete == s.Offset && ledgerLineHash(last) == s.LastLine, nil
}

// UpdateIntentMap folds the records appended to the ledger of orchDir
// (orchDir/agent_trace.jsonl) since the last update into the summary
// (intent_map.json) and rewrites intent_map.md if it changed, both atomically
// and under the lock intent_map.lock. rec and line are the record just
// appended and its line as AppendLine returned it; they save parsing it again,
// and may be nil. The cost depends on the records not yet folded in (normally
// one) and the size of the map, not on the ledger's length; when the summary is
// missing or no longer matches the ledger (rewritten by a merge, say), the map
// is rebuilt from the whole ledger.
func UpdateIntentMap(orchDir string, intents []Intent, rec *Record, line []byte) error {
	return intentMapRun(orchDir, intents, filepath.Join(orchDir, LedgerName), false, rec, line)
}

// RebuildIntentMap folds the whole ledger at ledgerPath (normally
// orchDir/agent_trace.jsonl, the one UpdateIntentMap reads) into a new
// summary and rewrites intent_map.md.
func RebuildIntentMap(orchDir string, intents []Intent, ledgerPath string) error {
	return intentMapRun(orchDir, intents, ledgerPath, true, nil, nil)
}

func intentMapRun(orchDir string, intents []Intent, ledgerPath string, rebuild bool, rec *Record, line []byte) error {
	if err := os.MkdirAll(orchDir, 0o755); err != nil {
		return fmt.Errorf("intent map: %w", err)
	}
	lock, err := fsx.Acquire(filepath.Join(orchDir, IntentMapLockName))
	if err != nil {
		return fmt.Errorf("intent map: %w", err)
	}
	defer lock.Release()

	sumPath := filepath.Join(orchDir, IntentMapSummaryName)
	var sum *IntentMapSummary
	if !rebuild {
		sum = intentMapLoad(sumPath)
	}
	dirty := sum == nil
	f, err := os.Open(ledgerPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if sum == nil || sum.Records > 0 {
			sum, dirty = newIntentMapSummary(), true
		}
	case err != nil:
		return fmt.Errorf("intent map: %w", err)
	default:
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("intent map: %w", err)
		}
		if sum != nil {
			ok, err := sum.matches(f, fi.Size())
			if err != nil {
				return err
			}
			if !ok {
				sum = nil
			}
		}
		if sum == nil {
			sum, dirty = newIntentMapSummary(), true
		}
		folded, err := sum.catchUp(f, rec, line)
		if err != nil {
			return err
		}
		dirty = dirty || folded
	}

	if dirty {
		b, err := json.Marshal(sum)
		if err != nil {
			return fmt.Errorf("intent map: %w", err)
		}
		if err := fsx.Replace(sumPath, append(b, '\n'), 0o644, fsx.Derived); err != nil {
			return fmt.Errorf("intent map: %w", err)
		}
	}
	mdPath := filepath.Join(orchDir, IntentMapName)
	md := RenderIntentMap(intents, sum)
	if old, err := os.ReadFile(mdPath); err == nil && bytes.Equal(old, md) {
		return nil
	}
	if err := fsx.WriteFile(mdPath, md, 0o644); err != nil {
		return fmt.Errorf("intent map: %w", err)
	}
	return nil
}

func intentMapLoad(path string) *IntentMapSummary {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var s IntentMapSummary
	if err := json.Unmarshal(b, &s); err != nil || s.Format != intentMapFormat || s.Intents == nil || s.Offset < 0 {
		return nil
	}
	for id, in := range s.Intents {
		if in == nil {
			s.Intents[id] = &IntentMapIntent{}
		}
		for _, e := range in.Files {
			if e == nil {
				return nil
			}
			e.Time = e.Time.UTC()
		}
	}
	return &s
}

// RenderIntentMap renders intent_map.md: every declared intent by id with its
// status, scope and the files it changed (latest ranges, trace id and time),
// then the intents the ledger names that are not (or no longer) declared. The
// same intents and summary always give the same bytes.
func RenderIntentMap(intents []Intent, summary *IntentMapSummary) []byte {
	if summary == nil {
		summary = newIntentMapSummary()
	}
	var b bytes.Buffer
	b.WriteString("# Intent map\n\n")
	fmt.Fprintf(&b, "Generated by intentgate from the ledger, %s (%s). Do not edit by hand: intentgate rewrites this file after every change.\n",
		LedgerName, intentMapPlural(summary.Records, "record"))

	sorted := append([]Intent(nil), intents...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	declared := make(map[string]bool, len(sorted))
	for _, in := range sorted {
		declared[in.ID] = true
		fmt.Fprintf(&b, "\n## %s — %s\n\n", intentMapText(in.ID), intentMapText(in.Name))
		fmt.Fprintf(&b, "- Status: %s\n", intentMapText(string(in.Status)))
		scope := make([]string, len(in.OwnedScope))
		for i, g := range in.OwnedScope {
			scope[i] = intentMapCode(g)
		}
		fmt.Fprintf(&b, "- Scope: %s\n", strings.Join(scope, ", "))
		intentMapBody(&b, summary.Intents[in.ID], true)
	}

	var undeclared []string
	for id := range summary.Intents {
		if !declared[id] {
			undeclared = append(undeclared, id)
		}
	}
	if len(undeclared) == 0 {
		return b.Bytes()
	}
	sort.Slice(undeclared, func(i, j int) bool {
		if (undeclared[i] == "") != (undeclared[j] == "") {
			return undeclared[j] == "" // records without an intent last
		}
		return undeclared[i] < undeclared[j]
	})
	b.WriteString("\n## Not declared\n\nRecords whose intent is not (or no longer) in active_intents.yaml.\n")
	for _, id := range undeclared {
		if id == "" {
			b.WriteString("\n### No intent\n\n")
		} else {
			fmt.Fprintf(&b, "\n### %s\n\n", intentMapText(id))
		}
		intentMapBody(&b, summary.Intents[id], false)
	}
	return b.Bytes()
}

// intentMapBody writes the counts, as items of the bullet list already open
// when listOpen, then the table of files.
func intentMapBody(b *bytes.Buffer, in *IntentMapIntent, listOpen bool) {
	if in == nil {
		in = &IntentMapIntent{}
	}
	if in.Denials > 0 {
		fmt.Fprintf(b, "- Denials: %d\n", in.Denials)
		listOpen = true
	}
	if in.Violations > 0 {
		fmt.Fprintf(b, "- Violations: %d\n", in.Violations)
		listOpen = true
	}
	if listOpen {
		b.WriteByte('\n')
	}
	if len(in.Files) == 0 {
		b.WriteString("No changes recorded.\n")
		return
	}
	paths := make([]string, 0, len(in.Files))
	for p := range in.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b.WriteString("| File | Lines | Trace | Time |\n| --- | --- | --- | --- |\n")
	for _, p := range paths {
		e := in.Files[p]
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", intentMapText(p), intentMapLines(e), intentMapText(e.Trace), e.Time.UTC().Format(time.RFC3339))
	}
}

// intentMapLines renders ranges as "12-20, 31".
func intentMapLines(e *IntentMapEntry) string {
	switch {
	case e.Deleted:
		return "(deleted)"
	case len(e.Ranges) == 0:
		return "(none)"
	}
	parts := make([]string, len(e.Ranges))
	for i, r := range e.Ranges {
		parts[i] = strconv.Itoa(r.StartLine)
		if r.EndLine != r.StartLine {
			parts[i] += "-" + strconv.Itoa(r.EndLine)
		}
	}
	return strings.Join(parts, ", ")
}

func intentMapPlural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// intentMapText makes s safe as Markdown text on one line and in a table cell.
var intentMapEscaper = strings.NewReplacer(
	`\`, `\\`, "|", `\|`, "`", "\\`", "*", `\*`, "<", `\<`, ">", `\>`, "[", `\[`, "]", `\]`,
	"\r\n", " ", "\n", " ", "\r", " ",
)

func intentMapText(s string) string { return intentMapEscaper.Replace(s) }

// intentMapCode renders s as a code span, fenced by more backticks than it
// contains in a row.
func intentMapCode(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	run, longest := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}
