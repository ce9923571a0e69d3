package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		row := *r
		row.files = nil
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// statRec is what the rows count of one record: its keys, and what a row
// counts under each.
type statRec struct {
	intent, model, tool []byte
	denial              bool
	code                []byte // the denial's code, when a denial
	violation           bool
	files               int // how many files: the next ones of the batch's
}

type statFile struct {
	path  []byte
	lines int
}

// statAcc is a table one stats worker fills: rows by key, each row's files
// as a set of the worker's path numbers.
type statAcc struct {
	rows map[string]*statAccRow
	last *statAccRow // the row of the last record: records come in runs
}

type statAccRow struct {
	StatRow
	codes map[string]*int // denials by code: one lookup a denial, no string made for a known code
	files []uint64        // bit n: path n
}

func newStatAcc() *statAcc { return &statAcc{rows: map[string]*statAccRow{}} }

// add counts a record read in place: no string is made unless the row or
// the code is new.
func (t *statAcc) add(key []byte, e *statRec, files []statFile, pathNo []int32) {
	r := t.last
	if r == nil || r.Key != string(key) {
		if r = t.rows[string(key)]; r == nil {
			r = &statAccRow{StatRow: StatRow{Key: string(key)}, codes: map[string]*int{}}
			t.rows[r.Key] = r
		}
		t.last = r
	}
	r.Records++
	if e.denial {
		r.Denials++
		code := e.code
		if len(code) == 0 {
			code = []byte("(none)")
		}
		if n := r.codes[string(code)]; n != nil {
			*n++
		} else {
			r.codes[string(code)] = new(1)
		}
		return
	}
	if e.violation {
		r.Violations++
	}
	r.Changes++
	for i, f := range files {
		r.LinesAdded += f.lines
		n := pathNo[i]
		for int(n/64) >= len(r.files) {
			r.files = append(r.files, 0)
		}
		r.files[n/64] |= 1 << (n % 64)
	}
}

// statWorker counts the lines of the chunks one worker reads. It reads a
// chunk's lines first, keeping what each record counts (slices of the
// chunk's bytes), and then counts them all (flush): the lookups of their
// paths then follow one another and do not depend on one another, so the
// processor waits for the memory of several at once, where one lookup
// after each line waited for each in turn.
type statWorker struct {
	view                   orchestration.CanonView
	lines, records, unpars int
	intents, models, tools *statAcc
	recs                   []statRec  // the records read and not yet counted
	files                  []statFile // their files, in order
	paths                  pathTable
	pathNo                 []int32 // the numbers of files' paths
}

func newStatWorker() statWorker {
	return statWorker{intents: newStatAcc(), models: newStatAcc(), tools: newStatAcc(), paths: newPathTable()}
}

func (w *statWorker) chunk(c *lineChunk) {
	c.eachLine(func(_ int, _, raw []byte) {
		w.lines++
		if !w.line(raw) {
			w.unpars++
			return
		}
		w.records++
	})
	w.flush()
}

// flush counts the records read since the last flush in the three tables.
// The slices they hold must still be valid.
func (w *statWorker) flush() {
	w.pathNo = w.pathNo[:0]
	for _, f := range w.files {
		w.pathNo = append(w.pathNo, w.paths.number(f.path))
	}
	at := 0
	for i := range w.recs {
		e := &w.recs[i]
		files, nos := w.files[at:at+e.files], w.pathNo[at:at+e.files]
		at += e.files
		w.intents.add(e.intent, e, files, nos)
		w.models.add(e.model, e, files, nos)
		w.tools.add(e.tool, e, files, nos)
	}
	clear(w.recs) // drop the slices of the chunk
	clear(w.files)
	w.recs, w.files = w.recs[:0], w.files[:0]
}

// line reads one line, reporting whether it is a record; a record's counts
// are kept for flush. A line of intentgate's writer is read in place; any
// other goes through ParseRecord and EntryOf, as the report and the log
// read it.
func (w *statWorker) line(raw []byte) bool {
	v := &w.view
	if v.Read(raw) && v.HasMeta {
		e := statRec{intent: v.Intent, tool: v.Tool}
		e.denial = string(v.Decision) == orchestration.DecisionDeny || string(v.Mutation) == orchestration.MutationDenial
		e.violation = string(v.Decision) == orchestration.DecisionViolation || string(v.Mutation) == orchestration.MutationViolation
		if e.denial && len(v.Denial) > 0 {
			e.code = denialCodeOf(v.Denial)
		}
		for _, f := range v.Files {
			sf := statFile{path: f.Path}
			for _, c := range v.Convs[f.ConvFrom:f.ConvTo] {
				if e.model == nil && c.HasContributor && len(c.ModelID) > 0 {
					e.model = c.ModelID
				}
				for _, r := range v.Ranges[c.RangeFrom:c.RangeTo] {
					sf.lines += r.EndLine - r.StartLine + 1
				}
			}
			w.files = append(w.files, sf)
		}
		e.files = len(v.Files)
		w.recs = append(w.recs, e)
		return true
	}
	// Another writer's line (or one of ours without metadata, whose
	// intent comes from its related resources).
	rec, err := orchestration.ParseRecord(raw)
	if err != nil {
		return false
	}
	en := EntryOf(0, rec)
	e := statRec{intent: []byte(en.Intent), model: []byte(en.Model), tool: []byte(en.Tool)}
	e.denial = en.IsDenial()
	e.violation = en.Decision == orchestration.DecisionViolation || en.Mutation == orchestration.MutationViolation
	e.code = []byte(en.Denial)
	for _, f := range en.Files {
		w.files = append(w.files, statFile{path: []byte(f.Path), lines: f.Lines})
	}
	e.files = len(en.Files)
	w.recs = append(w.recs, e)
	return true
}

// denialCodeOf is the code EntryOf finds in a denial (its "error" string):
// read in place when every member of the object is a plain ASCII string,
// as the denials intentgate writes are; by encoding/json otherwise.
func denialCodeOf(d []byte) []byte {
	if code, ok := plainDenialCode(d); ok {
		return code
	}
	var v struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(d, &v) != nil {
		return nil
	}
	return []byte(v.Error)
}

// plainDenialCode reads a compact object whose members are all strings of
// printable ASCII without escapes. encoding/json matches keys to fields
// without regard to case, and the last match wins: so does this.
func plainDenialCode(d []byte) ([]byte, bool) {
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return nil, false
	}
	var code []byte
	i := 1
	if d[i] == '}' {
		return nil, i == len(d)-1
	}
	str := func() ([]byte, bool) {
		if i >= len(d) || d[i] != '"' {
			return nil, false
		}
		start := i + 1
		for j := start; j < len(d); j++ {
			switch c := d[j]; {
			case c == '"':
				i = j + 1
				return d[start:j], true
			case c < 0x20 || c >= 0x7f || c == '\\':
				return nil, false
			}
		}
		return nil, false
	}
	for {
		k, ok := str()
		if !ok || i >= len(d) || d[i] != ':' {
			return nil, false
		}
		i++
		val, ok := str()
		if !ok {
			return nil, false
		}
		if bytes.EqualFold(k, []byte("error")) {
			code = val
		}
		if i >= len(d) {
			return nil, false
		}
		switch d[i] {
		case ',':
			i++
		case '}':
			return code, i == len(d)-1
		default:
			return nil, false
		}
	}
}

// ComputeStats reads the whole ledger once, on several goroutines, each
// counting the chunks it reads into tables of its own, merged at the end.
// Records without an intent, model or tool are counted under "".
func ComputeStats(ledger string, progress func(read int64)) (*Stats, error) {
	s := newStatState()
	if _, _, err := s.count(ledger, 0, 0, progress); err != nil {
		return nil, err
	}
	return s.stats(), nil
}

// statsChunkSize is the bytes per chunk a count reads. Stats does little
// per byte, so where the bytes are matters: with the 2*workers+2 chunks in
// flight this small, the chunk the kernel just copied into is still in the
// CPU's cache when a worker reads it, and the buffers are reused before
// they leave it. With the pipeline's default (4 MiB) both the copy and the
// read went to memory: on a 1M-record ledger that was a third more system
// time and 20 MB more RSS, for no gain in user time.
const statsChunkSize = 256 << 10

// count adds the whole lines of the ledger from byte from on, and returns
// the offset just past the last of them and how many there were. The
// workers read slots of the file each (countSlots); when the file shrinks
// under them, the count starts again through the chunk pipeline, which
// reads whatever the file holds.
func (s *statState) count(ledger string, from int64, chunk int, progress func(read int64)) (end int64, n int, err error) {
	f, err := os.Open(ledger)
	if err != nil {
		return 0, 0, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("ledger: %w", err)
	}
	return s.countSized(ledger, f, fi.Size(), from, chunk, progress)
}

// countSized is count of the ledger f opened at path, size bytes long when
// opened.
func (s *statState) countSized(ledger string, f *os.File, size, from int64, chunk int, progress func(read int64)) (end int64, n int, err error) {
	ws := countWorkers()
	end, err = countSlots(f, size, from, chunk, ws, progress)
	if errors.Is(err, errSlotsShrank) {
		ws = countWorkers()
		end, err = countPipeline(ledger, from, chunk, ws, progress)
	}
	if err != nil {
		return 0, 0, err
	}
	lines := s.lines
	for i := range ws {
		s.addWorker(&ws[i])
	}
	return end, s.lines - lines, nil
}

// countPipeline counts the whole lines from byte from on through the chunk
// pipeline, into ws (one per worker), and returns the offset just past the
// last of them.
func countPipeline(ledger string, from int64, chunk int, ws []statWorker, progress func(read int64)) (end int64, err error) {
	if chunk <= 0 {
		chunk = statsChunkSize
	}
	end = from
	err = runChunks(ledger, chunkOptions{from: from, workers: len(ws), size: chunk, progress: progress},
		func(w int, c *lineChunk) struct{} { ws[w].chunk(c); return struct{}{} },
		func(c *lineChunk, _ struct{}) error {
			end = c.off + int64(len(c.data))
			return nil
		})
	return end, err
}

// StatsReport is what `trace stats` shows: the ledger counted per intent,
// model and tool, and the tool usage the workspace's sessions recorded
// (every call, reads included; the ledger holds only changes and
// refusals). New sections are new fields: the JSON of the ones here stays.
type StatsReport struct {
	*Stats
	Sessions  int                       `json:"sessions"`
	ToolUsage orchestration.UsageReport `json:"tool_usage"`
}

// StatsOptions says which ledger and sessions StatsFor reads.
type StatsOptions struct {
	Workspace string // "" means "."
	Ledger    string // "" means Workspace/.orchestration/agent_trace.jsonl
	// Progress, if set, is called now and then with the bytes read and
	// the bytes to read (the ledger's size, less what the cached count
	// covers).
	Progress func(read, total int64)
}

// StatsFor counts the ledger and sums the sessions' tool usage. The count
// of the ledger's prefix is kept beside its index and extended by the lines
// appended since (see countStats): the result is the same as a full count.
func StatsFor(o StatsOptions) (*StatsReport, error) {
	ws := o.Workspace
	if ws == "" {
		ws = "."
	}
	ledger := o.Ledger
	if ledger == "" {
		ledger = filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	}
	s, _, err := countStats(ws, ledger, 0, o.Progress)
	if err != nil {
		return nil, err
	}
	usage, sessions, err := orchestration.SumUsage(filepath.Join(ws, ".orchestration", "sessions"))
	if err != nil {
		return nil, err
	}
	return &StatsReport{Stats: s, Sessions: sessions, ToolUsage: orchestration.AnalyzeUsage(usage)}, nil
}
