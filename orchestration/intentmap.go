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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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

	lastSize int64 // the length of the line LastLine names, newline included, when known
}

// IntentMapIntent is what the ledger says about one intent.
type IntentMapIntent struct {
	Files      map[string]*IntentMapEntry `json:"files,omitempty"` // by path
	Denials    int                        `json:"denials,omitempty"`
	Violations int                        `json:"violations,omitempty"`

	// What rendering made of it, kept while the summary stays in memory
	// so that an update renders only what changed: the paths in order
	// (nil until first needed) and the rendered body (nil when stale).
	paths []string
	body  [2][]byte // by listOpen
}

// IntentMapEntry is an intent's latest change of one file.
type IntentMapEntry struct {
	Ranges  []Range   `json:"ranges"`
	Deleted bool      `json:"deleted,omitempty"`
	Trace   string    `json:"trace"` // the record id
	Time    time.Time `json:"time"`

	row []byte // the rendered table row, once rendered
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
		in.body = [2][]byte{}
		return
	case decision == DecisionViolation || mutation == MutationViolation:
		in.Violations++
		in.body = [2][]byte{}
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
		if _, had := in.Files[f.Path]; !had && in.paths != nil {
			i := sort.SearchStrings(in.paths, f.Path)
			in.paths = slices.Insert(in.paths, i, f.Path)
		}
		in.Files[f.Path] = e
		in.body = [2][]byte{}
	}
}

// RecordedLine is a record this process appended and its line as
// AppendLine returned it: an intent map update that meets the line in the
// ledger takes the record instead of parsing the line again.
type RecordedLine struct {
	Rec  *Record
	Line []byte
}

// catchUp folds the complete lines of the ledger after s.Offset. A line that
// is one of known (lines the caller appended) is folded from its record
// instead of being parsed again. It reports whether anything was folded.
// linear is false when a folded record's prev is not the line before it.
func (s *IntentMapSummary) catchUp(ledger io.ReadSeeker, known []RecordedLine) (folded, linear bool, err error) {
	if _, err := ledger.Seek(s.Offset, io.SeekStart); err != nil {
		return false, false, fmt.Errorf("intent map: %w", err)
	}
	known = slices.Clone(known)
	linear = true
	err = ledgerLines(ledger, func(raw []byte, size int, complete bool) error {
		if !complete {
			return nil // a torn tail or an append in progress: later
		}
		var rec *Record
		for i, k := range known {
			if k.Rec != nil && len(k.Line) == len(raw) && bytes.Equal(k.Line, raw) {
				rec = k.Rec
				known = slices.Delete(known, i, i+1)
				break
			}
		}
		if rec == nil {
			var err error
			if rec, err = ReadLedgerLine(raw); err != nil {
				rec = nil
			}
		}
		if rec != nil {
			if rec.Meta == nil || rec.Meta.Prev != s.LastLine {
				linear = false
			}
			s.fold(rec)
		} else {
			s.Skipped++
			linear = false
		}
		s.Records++
		s.Offset += int64(size)
		s.LastLine = ledgerLineHash(raw)
		s.lastSize = int64(size)
		folded = true
		return nil
	})
	return folded, linear, err
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
	raw, ok, complete, _, err := ledgerTailRaw(ledger, s.Offset)
	if err != nil {
		return false, err
	}
	if !ok || complete != s.Offset || ledgerLineHash(ledgerTrimCR(raw[:len(raw)-1])) != s.LastLine {
		return false, nil
	}
	s.lastSize = int64(len(raw))
	return true, nil
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
	var known []RecordedLine
	if rec != nil && line != nil {
		known = []RecordedLine{{Rec: rec, Line: line}}
	}
	return intentMapRun(orchDir, intents, filepath.Join(orchDir, LedgerName), false, known, nil)
}

// UpdateIntentMapAfter is UpdateIntentMap after several appends of this
// process: known are their records and lines, in any order, and may be
// empty. A batched update folds every record appended since the last one,
// whoever appended it, so that what a skipped update would have shown is
// never lost, only shown later.
func UpdateIntentMapAfter(orchDir string, intents []Intent, known []RecordedLine) error {
	return intentMapRun(orchDir, intents, filepath.Join(orchDir, LedgerName), false, known, nil)
}

// UpdateIntentMapIf is UpdateIntentMapAfter for a process that shares the
// updates with others (see IntentMapShown): once it holds the map's lock,
// it is told what the last update showed, and updates only if want returns
// true. It reports whether it updated.
func UpdateIntentMapIf(orchDir string, intents []Intent, known []RecordedLine, want func(IntentMapShown) bool) (updated bool, err error) {
	err = intentMapRun(orchDir, intents, filepath.Join(orchDir, LedgerName), false, known, func(s IntentMapShown) bool {
		updated = want(s)
		return updated
	})
	return updated && err == nil, err
}

// RebuildIntentMap folds the whole ledger at ledgerPath (normally
// orchDir/agent_trace.jsonl, the one UpdateIntentMap reads) into a new
// summary and rewrites intent_map.md.
func RebuildIntentMap(orchDir string, intents []Intent, ledgerPath string) error {
	return intentMapRun(orchDir, intents, ledgerPath, true, nil, nil)
}

// intentMapState is what this process last wrote or read of one
// .orchestration directory's intent map: while the files are as it left them
// (same file, size and modification time), an update folds the new records
// into the summary in memory and renders only the intents they changed,
// instead of parsing the whole summary and rendering the whole map again.
type intentMapState struct {
	sum        *IntentMapSummary
	sumInfo    fs.FileInfo // intent_map.json as last written or read
	sumRecords int         // the records it holds
	md         []byte      // intent_map.md as last written
	mdInfo     fs.FileInfo
}

var (
	intentMapMu    sync.Mutex
	intentMapCache = map[string]*intentMapState{}
)

// intentMapLag is how many records the summary file may lag behind the
// ledger before an update rewrites it. It is derived: whoever reads a lagging
// summary folds the missing records from the ledger, so writing it on every
// update (its whole size, each time) buys nothing.
const intentMapLag = 64

func sameInfo(a, b fs.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func intentMapRun(orchDir string, intents []Intent, ledgerPath string, rebuild bool, known []RecordedLine, want func(IntentMapShown) bool) error {
	if err := os.MkdirAll(orchDir, 0o755); err != nil {
		return fmt.Errorf("intent map: %w", err)
	}
	lock, err := fsx.Acquire(filepath.Join(orchDir, IntentMapLockName))
	if err != nil {
		return fmt.Errorf("intent map: %w", err)
	}
	defer lock.Release()
	if want != nil && !want(readIntentMapShown(lock.File(), orchDir, intents)) {
		return nil
	}

	cacheKey := filepath.Clean(orchDir)
	intentMapMu.Lock()
	st := intentMapCache[cacheKey]
	delete(intentMapCache, cacheKey) // put back only when everything below went well
	intentMapMu.Unlock()
	if st == nil || rebuild || ledgerPath != filepath.Join(orchDir, LedgerName) {
		st = &intentMapState{}
	}

	sumPath := filepath.Join(orchDir, IntentMapSummaryName)
	// The summary sits where an agent's shell may write; it is trusted only
	// with the workspace key's MAC, else rebuilt from the ledger.
	key, keyErr := cachedWorkspaceKey(filepath.Dir(orchDir))
	sum := st.sum
	if cur, err := os.Stat(sumPath); sum == nil || err != nil || !sameInfo(cur, st.sumInfo) {
		sum, st.sumRecords = nil, 0
		if !rebuild && keyErr == nil {
			sum = intentMapLoad(sumPath, key)
			if sum != nil {
				st.sumInfo, st.sumRecords = cur, sum.Records
			}
		}
	}
	reset := sum == nil // a new summary: written at once, whatever its lag
	fromScratch := sum == nil
	var ledger *os.File      // the ledger the map shows, when it is orchDir's
	var ledgerFI os.FileInfo // and its identity
	f, err := os.Open(ledgerPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if sum == nil || sum.Records > 0 {
			sum, reset = newIntentMapSummary(), true
		}
	case err != nil:
		return fmt.Errorf("intent map: %w", err)
	default:
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("intent map: %w", err)
		}
		if ledgerPath == filepath.Join(orchDir, LedgerName) {
			ledger, ledgerFI = f, fi
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
			sum, reset, fromScratch = newIntentMapSummary(), true, true
		}
		folded, linear, err := sum.catchUp(f, known)
		if err != nil {
			return err
		}
		// The map shows only a ledger whose chain holds: lines that do
		// not link one after the other (a merge, or tampering) are
		// checked as verify's chain check does before anything is shown.
		if folded && (!linear || fromScratch) {
			rep, err := VerifyChain(ledgerPath)
			if err != nil {
				return err
			}
			if !rep.OK() {
				return fmt.Errorf("intent map: not rewritten: the ledger %s does not verify (%s); run intentgate trace verify", ledgerPath, rep.Reason)
			}
		}
	}

	if keyErr == nil && (reset || st.sumInfo == nil || sum.Records-st.sumRecords >= intentMapLag) {
		b, err := json.Marshal(sum)
		if err != nil {
			return fmt.Errorf("intent map: %w", err)
		}
		b = append(b, '\n')
		b = append(append(append(b, intentMapMACPrefix...), MAC(key, b)...), '\n')
		if err := fsx.Replace(sumPath, b, 0o644, fsx.Derived); err != nil {
			return fmt.Errorf("intent map: %w", err)
		}
		st.sumInfo, _ = os.Stat(sumPath)
		st.sumRecords = sum.Records
	}
	mdPath := filepath.Join(orchDir, IntentMapName)
	md := RenderIntentMap(intents, sum)
	cur, err := os.Stat(mdPath)
	same := err == nil && sameInfo(cur, st.mdInfo) && bytes.Equal(st.md, md)
	if !same && err == nil && st.mdInfo == nil {
		// Not written by this process: compare with what is there.
		if old, err := os.ReadFile(mdPath); err == nil && bytes.Equal(old, md) {
			same = true
			st.mdInfo = cur
		}
	}
	if !same {
		// intent_map.md is derived from the ledger: it is replaced
		// atomically, for readers, but not fsynced. After a crash the next
		// update finds it differing from what the ledger renders and
		// writes it again.
		if err := replaceUnsynced(mdPath, md); err != nil {
			return fmt.Errorf("intent map: %w", err)
		}
		st.mdInfo, _ = os.Stat(mdPath)
	}
	if keyErr != nil {
		key = nil
	}
	writeIntentMapMark(lock.File(), key, ledger, ledgerFI, sum, intents, mdPath)
	st.md, st.sum = md, sum
	intentMapMu.Lock()
	intentMapCache[cacheKey] = st
	intentMapMu.Unlock()
	return nil
}

// replaceUnsynced replaces path with data by a rename, so that a reader sees
// the old bytes or the new ones, without fsync.
func replaceUnsynced(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

const intentMapMACPrefix = "hmac-sha256:"

// intentMapLoad reads the summary: its JSON line, then a line with the MAC
// of that line (with its newline) under the workspace key.
func intentMapLoad(path string, key []byte) *IntentMapSummary {
	all, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	body, tail, ok := bytes.Cut(all, []byte("\n"+intentMapMACPrefix))
	if !ok {
		return nil
	}
	b := append(body, '\n')
	if !MACEqual(string(bytes.TrimSuffix(tail, []byte("\n"))), MAC(key, b)) {
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
// when listOpen, then the table of files. The body and its rows are kept on
// in, so that rendering again after an update costs only what changed.
func intentMapBody(b *bytes.Buffer, in *IntentMapIntent, listOpen bool) {
	if in == nil {
		in = &IntentMapIntent{}
	}
	k := 0
	if listOpen {
		k = 1
	}
	if in.body[k] != nil {
		b.Write(in.body[k])
		return
	}
	start := b.Len()
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
	} else {
		if len(in.paths) != len(in.Files) {
			in.paths = make([]string, 0, len(in.Files))
			for p := range in.Files {
				in.paths = append(in.paths, p)
			}
			sort.Strings(in.paths)
		}
		b.WriteString("| File | Lines | Trace | Time |\n| --- | --- | --- | --- |\n")
		for _, p := range in.paths {
			e := in.Files[p]
			if e.row == nil {
				e.row = fmt.Appendf(nil, "| %s | %s | %s | %s |\n", intentMapText(p), intentMapLines(e), intentMapText(e.Trace), e.Time.UTC().Format(time.RFC3339))
			}
			b.Write(e.row)
		}
	}
	in.body[k] = bytes.Clone(b.Bytes()[start:])
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

var workspaceKeys sync.Map // workspace dir -> []byte

func cachedWorkspaceKey(ws string) ([]byte, error) {
	if k, ok := workspaceKeys.Load(ws); ok {
		return k.([]byte), nil
	}
	k, err := WorkspaceKey(ws)
	if err != nil {
		return nil, err
	}
	workspaceKeys.Store(ws, k)
	return k, nil
}
