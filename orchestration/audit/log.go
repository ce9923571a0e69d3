package audit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/intentgate/intentgate/orchestration"
)

// Entry is one record as log and show list it.
type Entry struct {
	Line     int         `json:"ledger_line"`
	ID       string      `json:"id"`
	Time     time.Time   `json:"timestamp"`
	Intent   string      `json:"intent,omitempty"`
	Session  string      `json:"session,omitempty"`
	Model    string      `json:"model,omitempty"`
	Tool     string      `json:"tool,omitempty"`
	Agent    string      `json:"agent,omitempty"`
	Decision string      `json:"decision,omitempty"`
	Mutation string      `json:"mutation,omitempty"`
	Denial   string      `json:"denial,omitempty"` // the denial's code
	Message  string      `json:"message,omitempty"`
	Files    []EntryFile `json:"files"`
}

// EntryFile is a file of a record and the lines it wrote.
type EntryFile struct {
	Path   string   `json:"path"`
	Ranges [][2]int `json:"ranges"` // start and end lines
	Lines  int      `json:"lines"`  // how many
}

// EntryOf summarizes a record.
func EntryOf(line int, rec *orchestration.Record) Entry {
	e := Entry{Line: line, ID: rec.ID, Time: rec.Timestamp, Intent: rec.Intent(), Files: []EntryFile{}}
	if m := rec.Meta; m != nil {
		e.Session, e.Tool, e.Agent, e.Decision, e.Mutation = m.Session, m.Tool, m.Agent, m.Decision, m.Mutation
		if len(m.Denial) > 0 {
			var d struct {
				Error   string `json:"error"`
				Message string `json:"message"`
			}
			if json.Unmarshal(m.Denial, &d) == nil {
				e.Denial, e.Message = d.Error, d.Message
			}
		}
	}
	for _, f := range rec.Files {
		ef := EntryFile{Path: f.Path, Ranges: [][2]int{}}
		for _, c := range f.Conversations {
			if c.Contributor != nil && c.Contributor.ModelID != "" && e.Model == "" {
				e.Model = c.Contributor.ModelID
			}
			for _, r := range c.Ranges {
				ef.Ranges = append(ef.Ranges, [2]int{r.StartLine, r.EndLine})
				ef.Lines += r.EndLine - r.StartLine + 1
			}
		}
		e.Files = append(e.Files, ef)
	}
	return e
}

// IsDenial reports whether the entry is a refusal.
func (e *Entry) IsDenial() bool {
	return e.Decision == orchestration.DecisionDeny || e.Mutation == orchestration.MutationDenial
}

// LogOptions filters the ledger; the filters combine with "and".
type LogOptions struct {
	Workspace string
	Ledger    string
	Intent    string
	File      string // workspace-relative
	Session   string
	Since     time.Time
	Denials   bool // refusals only
	Limit     int  // only the last Limit entries; 0 for all
	NoIndex   bool // scan the ledger instead of using the index
}

func (o *LogOptions) ledgerPath() string {
	if o.Ledger != "" {
		return o.Ledger
	}
	ws := o.Workspace
	if ws == "" {
		ws = "."
	}
	return filepath.Join(ws, ".orchestration", orchestration.LedgerName)
}

func (o *LogOptions) matches(e *Entry) bool {
	switch {
	case o.Intent != "" && e.Intent != o.Intent,
		o.Session != "" && e.Session != o.Session,
		o.Denials && !e.IsDenial(),
		!o.Since.IsZero() && e.Time.Before(o.Since):
		return false
	}
	if o.File != "" {
		for _, f := range e.Files {
			if f.Path == o.File {
				return true
			}
		}
		return false
	}
	return true
}

// Log lists the records that match, in ledger order. Unparsable lines are
// skipped (verify reports them).
func Log(o LogOptions) ([]Entry, error) {
	var out []Entry
	err := LogEach(o, func(e *Entry) error {
		out = append(out, *e)
		return nil
	})
	return out, err
}

// LogEach is Log calling fn with each entry in turn, so that a long log is
// never held in memory whole.
func LogEach(o LogOptions, fn func(*Entry) error) error {
	ledger := o.ledgerPath()
	if o.File != "" {
		ws := o.Workspace
		if ws == "" {
			ws = "."
		}
		rel, err := RelPath(ws, o.File)
		if err != nil {
			return err
		}
		o.File = rel
	}
	err := ErrNoIndex
	if !o.NoIndex {
		emitted := 0
		err = withIndex(ledger, o.Workspace, func(ix *Index) error {
			// A retry after a rebuild yields the same entries: skip the
			// ones already given.
			skip := emitted
			return o.fromIndex(ix, func(e *Entry) error {
				if skip > 0 {
					skip--
					return nil
				}
				emitted++
				return fn(e)
			})
		})
	}
	if !errors.Is(err, ErrNoIndex) {
		return err
	}
	var ring []Entry
	n := 0
	err = Scan(ledger, ScanOptions{Parse: true}, func(l *Line) error {
		if l.Rec == nil {
			return nil
		}
		e := EntryOf(l.No, l.Rec)
		switch {
		case !o.matches(&e):
		case o.Limit <= 0:
			return fn(&e)
		case len(ring) < o.Limit:
			ring = append(ring, e)
			n++
		default:
			ring[n%o.Limit] = e
			n++
		}
		return nil
	})
	if err != nil || len(ring) == 0 {
		return err
	}
	for i := range ring {
		e := ring[(n+i)%len(ring)]
		if len(ring) < o.Limit {
			e = ring[i]
		}
		if err := fn(&e); err != nil {
			return err
		}
	}
	return nil
}

func (o *LogOptions) fromIndex(ix *Index, fn func(*Entry) error) error {
	lines, err := o.candidates(ix)
	if err != nil {
		return err
	}
	if o.Limit > 0 && len(lines) > o.Limit {
		lines = lines[len(lines)-o.Limit:]
	}
	const chunk = 4096
	for len(lines) > 0 {
		part := lines[:min(chunk, len(lines))]
		lines = lines[len(part):]
		recs, err := ix.readMany(part)
		if err != nil {
			return err
		}
		for i, rec := range recs {
			if rec == nil {
				continue
			}
			if e := EntryOf(part[i], rec); o.matches(&e) {
				if err := fn(&e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// candidates are the lines the index files under every key asked for, after
// the time filter on its line table.
func (o *LogOptions) candidates(ix *Index) ([]int, error) {
	var keys []string
	if o.Intent != "" {
		keys = append(keys, keyIntent+o.Intent)
	}
	if o.File != "" {
		keys = append(keys, keyPath+o.File)
	}
	if o.Session != "" {
		keys = append(keys, keySession+o.Session)
	}
	if o.Denials {
		keys = append(keys, keyDenial)
	}
	var lines []int
	if len(keys) == 0 {
		err := ix.allEntries(func(line int, e entry) error {
			if e.Flags&flagParsed != 0 && (o.Since.IsZero() || !e.Time.Before(o.Since)) {
				lines = append(lines, line)
			}
			return nil
		})
		return lines, err
	}
	for i, k := range keys {
		p, err := ix.postings(k)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			lines = p
			continue
		}
		lines = intersect(lines, p)
	}
	if o.Since.IsZero() {
		return lines, nil
	}
	kept := lines[:0]
	for _, line := range lines {
		e, err := ix.entry(line)
		if err != nil {
			return nil, err
		}
		if !e.Time.Before(o.Since) {
			kept = append(kept, line)
		}
	}
	return kept, nil
}

func intersect(a, b []int) []int {
	var out []int
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

// readMany reads and parses the records of lines from the ledger, several at
// a time; a line that does not parse gives nil.
func (ix *Index) readMany(lines []int) ([]*orchestration.Record, error) {
	out := make([]*orchestration.Record, len(lines))
	r, err := ix.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	workers := runtime.GOMAXPROCS(0)
	chunk := (len(lines) + workers - 1) / max(workers, 1)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(lines))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				_, rec, err := r.read(lines[i])
				if err != nil {
					errs[w] = err
					return
				}
				out[i] = rec
			}
		}(w, lo, hi)
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// Shown is one record with where it sits in the chain.
type Shown struct {
	Entry
	Record json.RawMessage `json:"record"`
	// Link says how prev ties the record into the chain: "first", "previous
	// line", "line N" (a fork), or "BROKEN".
	Link string `json:"link"`
	// NextLinks says whether the next line's prev names this one.
	NextLinks bool `json:"next_links"`
	Last      bool `json:"last"`
}

// Show finds a record by id, or by an unambiguous prefix or suffix of it of
// at least 8 hex digits (log prints the last 12, ShortID).
func Show(workspace, ledger, id string) (*Shown, error) {
	if ledger == "" {
		ledger = (&LogOptions{Workspace: workspace}).ledgerPath()
	}
	hx := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	matches := func(recID string) bool {
		r := strings.ReplaceAll(recID, "-", "")
		return strings.HasPrefix(r, hx) || strings.HasSuffix(r, hx)
	}
	var out *Shown
	err := withIndex(ledger, workspace, func(ix *Index) error {
		line, err := ix.findIDPrefix(id)
		if err != nil {
			return err
		}
		r, err := ix.reader()
		if err != nil {
			return err
		}
		defer r.Close()
		raw, rec, err := r.read(line)
		if err != nil {
			return err
		}
		if rec == nil || !matches(rec.ID) {
			return errIndexStale
		}
		var prev []byte
		if line > 1 {
			prev, _, _ = r.read(line - 1)
		}
		var next *orchestration.Record
		if line < ix.Lines() {
			_, next, _ = r.read(line + 1)
		}
		out = shown(line, raw, rec, prev, next, line == ix.Lines())
		return nil
	})
	if !errors.Is(err, ErrNoIndex) {
		return out, err
	}
	// No index: read the ledger through.
	if len(hx) < 8 {
		return nil, fmt.Errorf("record id %q: give at least 8 hex digits", id)
	}
	var found []int
	var raw, before, prev []byte
	var rec, next *orchestration.Record
	last := 0
	err = Scan(ledger, ScanOptions{Parse: true}, func(l *Line) error {
		if !l.Complete {
			return nil
		}
		last = l.No
		if len(found) == 1 && l.No == found[0]+1 {
			next = l.Rec
		}
		if l.Rec != nil && matches(l.Rec.ID) {
			found = append(found, l.No)
			raw, rec, prev = l.Raw, l.Rec, before
		}
		before = l.Raw
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case len(found) == 0:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	case len(found) > 1:
		return nil, fmt.Errorf("record id %q is ambiguous: give more digits", id)
	}
	return shown(found[0], raw, rec, prev, next, found[0] == last), nil
}

func shown(line int, raw []byte, rec *orchestration.Record, prev []byte, next *orchestration.Record, last bool) *Shown {
	s := &Shown{Entry: EntryOf(line, rec), Record: append(json.RawMessage(nil), raw...), Last: last}
	switch {
	case rec.Meta == nil:
		s.Link = "BROKEN: no " + orchestration.MetaKey + " metadata"
	case rec.Meta.Prev == "" && line == 1:
		s.Link = "first"
	case rec.Meta.Prev == "":
		s.Link = "starts a new chain"
	case prev != nil && orchestration.LineLink(prev) == rec.Meta.Prev:
		s.Link = "previous line"
	default:
		s.Link = "not the previous line (a fork, or tampering: run trace verify)"
	}
	if next != nil && next.Meta != nil {
		s.NextLinks = next.Meta.Prev == orchestration.LineLink(raw)
	}
	return s
}

// ErrNotFound: no record has the id.
var ErrNotFound = errors.New("no such record")

func (ix *Index) findIDPrefix(id string) (int, error) {
	hx := strings.ToLower(strings.ReplaceAll(id, "-", ""))
	if len(hx) == 32 {
		line, err := ix.findID(id)
		if err == nil && line == 0 {
			err = fmt.Errorf("%w: %s", ErrNotFound, id)
		}
		return line, err
	}
	if len(hx) < 8 {
		return 0, fmt.Errorf("record id %q: give at least 8 hex digits", id)
	}
	even := hx[:len(hx)&^1]
	prefix, err := hex.DecodeString(even)
	if err != nil || len(prefix) > 16 {
		return 0, fmt.Errorf("record id %q: not hex digits of a record id", id)
	}
	var found []int
	buf := make([]byte, idEntry)
	for _, s := range ix.segs {
		i := sort.Search(s.nIDs, func(i int) bool {
			if _, err := s.f.ReadAt(buf, s.offIDs+int64(i*idEntry)); err != nil {
				return true
			}
			return bytes.Compare(buf[:len(prefix)], prefix) >= 0
		})
		for ; i < s.nIDs && len(found) < 2; i++ {
			if _, err := s.f.ReadAt(buf, s.offIDs+int64(i*idEntry)); err != nil {
				return 0, fmt.Errorf("index: %w", err)
			}
			if !bytes.HasPrefix(buf[:16], prefix) {
				break
			}
			if len(hx) > len(even) && hex.EncodeToString(buf[len(prefix) : len(prefix)+1])[0] != hx[len(hx)-1] {
				continue
			}
			found = append(found, s.firstLine+int(leU32(buf[16:])))
		}
		for _, line := range found {
			if line >= s.firstLine+s.n {
				return 0, errIndexStale
			}
		}
	}
	if len(found) == 0 {
		// Not a prefix: a suffix, as ShortID prints it. The id table is
		// sorted by prefix, so this reads it through.
		for _, s := range ix.segs {
			tab := make([]byte, s.nIDs*idEntry)
			if _, err := s.f.ReadAt(tab, s.offIDs); err != nil {
				return 0, fmt.Errorf("index: %w", err)
			}
			for i := 0; i < s.nIDs && len(found) < 2; i++ {
				e := tab[i*idEntry:]
				if strings.HasSuffix(hex.EncodeToString(e[:16]), hx) {
					if int(leU32(e[16:])) >= s.n {
						return 0, errIndexStale
					}
					found = append(found, s.firstLine+int(leU32(e[16:])))
				}
			}
		}
	}
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("%w: %s", ErrNotFound, id)
	case 1:
		return found[0], nil
	}
	return 0, fmt.Errorf("record id %q is ambiguous: give more digits", id)
}

func leU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
