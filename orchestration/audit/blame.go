package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// BlameOptions says which file to blame.
type BlameOptions struct {
	Workspace string
	Ledger    string // "" means Workspace/.orchestration/agent_trace.jsonl
	Path      string // the file, relative to Workspace (or absolute inside it)
	NoIndex   bool   // read the whole ledger instead of the index
}

// Evidence kinds of an attribution.
const (
	EvidenceReplay    = "replay"
	EvidenceMoved     = "moved"
	EvidenceRange     = "range"
	EvidenceElsewhere = "range-elsewhere"
)

// Reasons a line is unattributed.
const (
	ReasonNoRecord  = "no record wrote this content"
	ReasonEdited    = "changed after the record that wrote this file (not in the ledger)"
	ReasonOutside   = "changed between two records (not in the ledger)"
	ReasonPredates  = "predates the ledger"
	ReasonAmbiguous = "the same content was recorded in several places"
	// ReasonSessions: the record that wrote the line holds a command's
	// changes and another session's together (Meta.Ambiguous).
	ReasonSessions = "written while a command and another session both changed the file; the ledger cannot tell whose (record %s)"
	// ReasonOlder: the line is older than a change the replay cannot
	// follow back (it deleted lines, and no snapshot of the version before
	// it exists), and no recorded range holds it whole.
	ReasonOlder = "older than record %s, which the ledger alone cannot replay past"
)

// Attribution is the record a line is attributed to.
type Attribution struct {
	Record     string    `json:"record"`
	LedgerLine int       `json:"ledger_line"`
	Time       time.Time `json:"time"`
	Intent     string    `json:"intent,omitempty"`
	Session    string    `json:"session,omitempty"`
	Model      string    `json:"model,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	Agent      string    `json:"agent,omitempty"`
	Decision   string    `json:"decision,omitempty"`
	From       string    `json:"from,omitempty"` // the file the record wrote it in, when another
	Evidence   string    `json:"evidence"`
}

// BlameLine is one line of the file.
type BlameLine struct {
	Line   int          `json:"line"`
	Text   string       `json:"text"`
	Record *Attribution `json:"record,omitempty"`
	Reason string       `json:"unattributed,omitempty"`
}

// BlameResult is a file's blame.
type BlameResult struct {
	Path    string      `json:"path"`
	Records int         `json:"records"` // changes the ledger records for it
	Lines   []BlameLine `json:"lines"`
	Index   string      `json:"-"` // how the index was brought up to date
}

// Blame attributes each line of a file as it is now to the ledger record that
// last wrote it. The ledger keeps, per change, the changed line ranges with a
// SHA-256 of each range's lines (not of each line), the whole file's hash
// before and after, and how many lines went. The rule, strongest evidence
// first:
//
//  1. replay: starting from the file as it is, if it hashes to the latest
//     record's after_sha256 (or a snapshot of that content shows which lines
//     a person changed since), the records are walked back one by one. A line
//     inside a record's ranges was written by that record; a line outside them
//     was there before, and is followed into the previous version when the
//     ledger's hashes pin that version down: the record deleted no line, or a
//     snapshot of the content before it exists, or the lines it deleted are
//     exactly lines it inserted elsewhere (a move; checked by hashing the
//     reconstructed file against before_sha256). A line a record re-inserted
//     that the same record deleted elsewhere (found in a snapshot, or proven
//     by that hash) is a move, and keeps its earlier writer; from a snapshot
//     a line counts as moved within a run of two or more moved lines, or
//     alone when it has 8 non-blank bytes or more (a lone "}" proves nothing). When the
//     previous version cannot be pinned, lines that survive are still given
//     to the previous record if its ranges covered that whole version (a
//     file it created). Every range whose lines are all known is re-hashed
//     against the ledger on the way; a mismatch stops the replay.
//  2. range: lines the replay could not reach are matched by content: a run
//     of lines whose hash equals a range a record of this file recorded was
//     written by that record (the newest one, when several recorded the same
//     content); a range found in more than one place is ambiguous and gives
//     nothing.
//  3. range elsewhere: a range recorded for another file, found here, when
//     its content is not trivial (16 non-blank bytes or more), occurs once in
//     this file and was recorded by one record only. The same rule credits a
//     line a record inserted here to an older record that wrote it elsewhere
//     (code moved between files), or earlier in this file when the record
//     also deleted at least as many lines (a move replay could not prove).
//
// Anything else is unattributed, with the reason, never guessed.
func Blame(o BlameOptions) (*BlameResult, error) {
	ws := o.Workspace
	if ws == "" {
		ws = "."
	}
	ledger := o.Ledger
	if ledger == "" {
		ledger = filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	}
	rel, err := RelPath(ws, o.Path)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, err
	}
	content, err := snap.ReadRooted(root, rel)
	root.Close()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file in the workspace", rel)
		}
		return nil, err
	}
	b := newBlamer(rel, content)
	b.indexDir = indexDir(ledger)
	b.snaps = snap.OpenStore(b.indexDir)
	defer b.snaps.Close()
	res := &BlameResult{Path: rel}
	err = ErrNoIndex
	if !o.NoIndex {
		err = withIndex(ledger, ws, func(ix *Index) error {
			res.Index = ix.Built
			b.ix = ix
			b.capture = true
			b.reset()
			if err := b.historyFromIndex(); err != nil {
				return err
			}
			b.run()
			return b.err
		})
	}
	if errors.Is(err, ErrNoIndex) {
		res.Index = "none"
		b.ix, b.capture = nil, false
		b.reset()
		if err = b.historyFromLedger(ledger); err == nil {
			b.run()
		}
	}
	if err != nil {
		return nil, err
	}
	res.Records = len(b.hist)
	res.Lines = make([]BlameLine, len(b.norm))
	for i, l := range b.norm {
		bl := BlameLine{Line: i + 1, Text: string(l), Record: b.attr[i]}
		if bl.Record == nil {
			bl.Reason = b.reason[i]
			if bl.Reason == "" {
				bl.Reason = ReasonNoRecord
			}
		}
		res.Lines[i] = bl
	}
	// The file holds what its latest record left: keep its fingerprints so
	// that a later hand edit does not cost the lines around it their writers.
	if n := len(b.hist); n > 0 && b.hist[n-1].after == b.fileSHA && b.capture {
		b.snaps.Write(b.fileSHA, content)
	}
	return res, nil
}

// Only keeps lines from to to (1-based, inclusive; to past the end means
// the last line) of the result, as blame -L asks.
func (r *BlameResult) Only(from, to int) error {
	if from < 1 || to < from {
		return fmt.Errorf("line range %d,%d: want 1 <= from <= to", from, to)
	}
	if from > len(r.Lines) {
		return fmt.Errorf("line range %d,%d: %s has %d lines", from, to, r.Path, len(r.Lines))
	}
	r.Lines = r.Lines[from-1 : min(to, len(r.Lines))]
	return nil
}

// RelPath makes p (relative to the workspace, or absolute inside it) a clean
// workspace-relative slash path.
func RelPath(ws, p string) (string, error) {
	if p == "" {
		return "", errors.New("no file given")
	}
	if filepath.IsAbs(p) {
		absWS, err := filepath.Abs(ws)
		if err != nil {
			return "", err
		}
		r, err := filepath.Rel(absWS, p)
		if err != nil {
			return "", err
		}
		p = r
	}
	rel := path.Clean(filepath.ToSlash(p))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
		return "", fmt.Errorf("%s is not inside the workspace", p)
	}
	return rel, nil
}

// histRec is one change of the blamed file.
type histRec struct {
	line     int
	rec      *orchestration.Record
	ranges   []orchestration.Range
	before   string
	after    string
	deleted  int
	mutation string
}

func (h *histRec) attribution(evidence, from string) *Attribution {
	a := &Attribution{Record: h.rec.ID, LedgerLine: h.line, Time: h.rec.Timestamp, Intent: h.rec.Intent(), Evidence: evidence, From: from}
	if m := h.rec.Meta; m != nil {
		a.Session, a.Tool, a.Agent, a.Decision = m.Session, m.Tool, m.Agent, m.Decision
	}
	for _, f := range h.rec.Files {
		for _, c := range f.Conversations {
			if c.Contributor != nil && c.Contributor.ModelID != "" && a.Model == "" {
				a.Model = c.Contributor.ModelID
			}
		}
	}
	return a
}

func newHist(line int, rec *orchestration.Record, p string) *histRec {
	h := &histRec{line: line, rec: rec}
	if m := rec.Meta; m != nil {
		h.before, h.after, h.deleted, h.mutation = m.BeforeSHA256, m.AfterSHA256, m.DeletedLines, m.Mutation
	}
	for _, f := range rec.Files {
		if f.Path != p {
			continue
		}
		for _, c := range f.Conversations {
			h.ranges = append(h.ranges, c.Ranges...)
		}
	}
	sort.SliceStable(h.ranges, func(i, j int) bool { return h.ranges[i].StartLine < h.ranges[j].StartLine })
	return h
}

// slot is a line of some version of the file: its fingerprint and the line
// of the current file it became, or -1.
type slot struct {
	fp uint64
	fi int
}

type blamer struct {
	path     string
	content  []byte
	raw      [][]byte // lines with their terminators
	norm     [][]byte // without, as ranges hash them
	fps      []uint64
	fileSHA  string
	hist     []*histRec
	attr     []*Attribution
	inserted []*histRec // the record whose range a replay found the line in
	reason   []string
	ix       *Index
	indexDir string
	snaps    *snap.Store // the snapshots, read and written (nil: none)
	err      error
	others   map[int]*orchestration.Record // records of other files, by ledger line
	capture  bool                          // keep snapshots of versions replay pins down
}

func newBlamer(p string, content []byte) *blamer {
	b := &blamer{path: p, content: content, fileSHA: snap.SHA256Hex(content)}
	for rest := content; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			b.raw = append(b.raw, rest)
			b.norm = append(b.norm, rest)
			break
		}
		b.raw = append(b.raw, rest[:i+1])
		b.norm = append(b.norm, trimCR(rest[:i]))
		rest = rest[i+1:]
	}
	b.fps = fingerprints(b.norm)
	b.reset()
	return b
}

func (b *blamer) reset() {
	b.hist = nil
	b.attr = make([]*Attribution, len(b.norm))
	b.inserted = make([]*histRec, len(b.norm))
	b.reason = make([]string, len(b.norm))
	b.others = map[int]*orchestration.Record{}
	b.err = nil
}

func (b *blamer) historyFromIndex() error {
	lines, err := b.ix.postings(keyPath + b.path)
	if err != nil {
		return err
	}
	recs, err := b.ix.readMany(lines)
	if err != nil {
		return err
	}
	for i, line := range lines {
		rec := recs[i]
		if rec == nil || !recordHasPath(rec, b.path) {
			return errIndexStale
		}
		if isChange(rec) {
			b.hist = append(b.hist, newHist(line, rec, b.path))
		}
	}
	return nil
}

func (b *blamer) historyFromLedger(ledger string) error {
	return Scan(ledger, ScanOptions{Parse: true}, func(l *Line) error {
		if l.Rec == nil || !isChange(l.Rec) {
			return nil
		}
		if recordHasPath(l.Rec, b.path) {
			b.hist = append(b.hist, newHist(l.No, l.Rec, b.path))
		} else if recordHasRanges(l.Rec) {
			b.others[l.No] = l.Rec
		}
		return nil
	})
}

// recordAmbiguous says whether rec holds a command's and another session's
// changes together: blame credits neither.
func recordAmbiguous(rec *orchestration.Record) bool {
	return rec.Meta != nil && rec.Meta.Ambiguous != ""
}

func recordHasPath(rec *orchestration.Record, p string) bool {
	for _, f := range rec.Files {
		if f.Path == p {
			return true
		}
	}
	return false
}

func recordHasRanges(rec *orchestration.Record) bool {
	for _, f := range rec.Files {
		for _, c := range f.Conversations {
			if len(c.Ranges) > 0 {
				return true
			}
		}
	}
	return false
}

func (b *blamer) run() {
	b.replay()
	b.windows()
}

func (b *blamer) assign(fi int, h *histRec, evidence string) {
	if fi >= 0 && b.attr[fi] == nil && recordAmbiguous(h.rec) {
		b.reason[fi] = fmt.Sprintf(ReasonSessions, ShortID(h.rec.ID))
		return
	}
	if fi >= 0 && b.attr[fi] == nil {
		b.attr[fi] = h.attribution(evidence, "")
		b.reason[fi] = ""
	}
}

func (b *blamer) snapshot(sha string) ([]uint64, bool) {
	if sha == "" || b.snaps == nil {
		return nil, false
	}
	return b.snaps.Read(sha)
}

// replay walks the file's records back from its current content.
func (b *blamer) replay() {
	n := len(b.hist)
	if n == 0 {
		return
	}
	last := b.hist[n-1]
	if last.mutation == orchestration.MutationDelete {
		return // deleted by its last record, so this content is not the ledger's
	}
	var state []slot
	if last.after != "" && last.after == b.fileSHA {
		state = make([]slot, len(b.fps))
		for i, fp := range b.fps {
			state[i] = slot{fp: fp, fi: i}
		}
	} else if snap, ok := b.snapshot(last.after); ok {
		state = b.alignCurrent(snap)
	} else {
		return
	}
	for k := n - 1; k >= 0; k-- {
		r := b.hist[k]
		inRange, ok := rangeMask(r.ranges, len(state))
		if !ok || !b.rangesHold(r, state) {
			return
		}
		var u []slot
		for i, s := range state {
			if !inRange[i] {
				u = append(u, s)
			}
		}
		var before []slot
		moved := map[int]bool{}
		known := false
		switch {
		case r.mutation == orchestration.MutationCreate || r.before == "":
			known = len(u) == 0
		default:
			if snap, ok := b.snapshot(r.before); ok {
				before, known = b.alignBefore(state, inRange, snap, moved), true
			} else if r.deleted == 0 {
				before, known = u, true
			} else {
				before, known = b.moveHypothesis(state, inRange, u, r, moved)
			}
		}
		for i, s := range state {
			if inRange[i] && !moved[i] && s.fi >= 0 && b.attr[s.fi] == nil {
				b.assign(s.fi, r, EvidenceReplay)
				b.inserted[s.fi] = r
			}
		}
		if known && b.capture && r.before != "" {
			b.keepVersion(before, r.before)
		}
		if !known {
			// The version before cannot be pinned down; if the previous
			// record wrote all of it, every line that survived is its.
			b.older(u, r)
			if k > 0 {
				p := b.hist[k-1]
				if p.after != "" && p.after == r.before && p.mutation != orchestration.MutationDelete && coverage(p.ranges) == len(u)+r.deleted {
					for _, s := range u {
						b.assign(s.fi, p, EvidenceReplay)
					}
				}
			}
			return
		}
		if k == 0 {
			for _, s := range before {
				if s.fi >= 0 && b.attr[s.fi] == nil {
					b.reason[s.fi] = ReasonPredates
				}
			}
			return
		}
		p := b.hist[k-1]
		switch {
		case p.mutation == orchestration.MutationDelete:
			return
		case p.after != "" && p.after == r.before:
			state = before
		default:
			// Something the ledger did not see changed the file between
			// the two records.
			snap, ok := b.snapshot(p.after)
			if !ok {
				b.older(before, r)
				return
			}
			state = b.alignOutside(before, snap)
		}
	}
}

// keepVersion snapshots a version replay reconstructed entirely from current
// lines, once its bytes are proven to hash to the ledger's sha: what a later
// hand edit would make unprovable stays known.
func (b *blamer) keepVersion(version []slot, sha string) {
	if _, ok := b.snapshot(sha); ok || !validSHA(sha) {
		return
	}
	var buf bytes.Buffer
	for _, s := range version {
		if s.fi < 0 {
			return
		}
		buf.Write(b.raw[s.fi])
	}
	b.snaps.Write(sha, buf.Bytes()) // checks the hash
}

// older marks the lines a replay could not follow past r.
func (b *blamer) older(slots []slot, r *histRec) {
	for _, s := range slots {
		if s.fi >= 0 && b.attr[s.fi] == nil && b.reason[s.fi] == "" {
			b.reason[s.fi] = fmt.Sprintf(ReasonOlder, ShortID(r.rec.ID))
		}
	}
}

// rangeMask marks the lines inside ranges; false if a range is out of the
// version's bounds (the ledger and the reconstruction disagree).
func rangeMask(ranges []orchestration.Range, n int) ([]bool, bool) {
	m := make([]bool, n)
	for _, r := range ranges {
		if r.StartLine < 1 || r.EndLine > n || r.EndLine < r.StartLine {
			return nil, false
		}
		for i := r.StartLine - 1; i < r.EndLine; i++ {
			m[i] = true
		}
	}
	return m, true
}

func coverage(ranges []orchestration.Range) int {
	n := 0
	for _, r := range ranges {
		n += r.EndLine - r.StartLine + 1
	}
	return n
}

// rangesHold re-hashes each range of r whose lines are all current lines.
func (b *blamer) rangesHold(r *histRec, state []slot) bool {
	for _, rg := range r.ranges {
		if rg.ContentHash == "" {
			continue
		}
		lines := make([][]byte, 0, rg.EndLine-rg.StartLine+1)
		for i := rg.StartLine - 1; i < rg.EndLine; i++ {
			if state[i].fi < 0 {
				lines = nil
				break
			}
			lines = append(lines, b.norm[state[i].fi])
		}
		if lines != nil && hashLines(lines) != rg.ContentHash {
			return false
		}
	}
	return true
}

// alignCurrent relates the current file to a snapshot of what the latest
// record left: lines a person moved keep their identity, lines a person
// changed are marked.
func (b *blamer) alignCurrent(snap []uint64) []slot {
	state := make([]slot, len(snap))
	for j, fp := range snap {
		state[j] = slot{fp: fp, fi: -1}
	}
	ma := align(b.fps, snap)
	var loose []int
	for i, j := range ma {
		if j >= 0 {
			state[j].fi = i
		} else {
			loose = append(loose, i)
		}
	}
	b.matchMoves(loose, func(i int) uint64 { return b.fps[i] }, func(i int) []byte { return b.norm[i] }, state,
		func(i, j int) { state[j].fi = i })
	for _, i := range loose {
		if !b.slotted(state, i) {
			b.reason[i] = ReasonEdited
		}
	}
	return state
}

func (b *blamer) slotted(state []slot, fi int) bool {
	for _, s := range state {
		if s.fi == fi {
			return true
		}
	}
	return false
}

// alignBefore builds the version before r from a snapshot of it: the lines
// outside r's ranges are matched to it in order, and lines r inserted that it
// deleted elsewhere are moves.
func (b *blamer) alignBefore(state []slot, inRange []bool, snap []uint64, moved map[int]bool) []slot {
	before := make([]slot, len(snap))
	for j, fp := range snap {
		before[j] = slot{fp: fp, fi: -1}
	}
	var idx []int
	var ufps []uint64
	for i, s := range state {
		if !inRange[i] {
			idx = append(idx, i)
			ufps = append(ufps, s.fp)
		}
	}
	ma := align(ufps, snap)
	for k, j := range ma {
		if j >= 0 {
			before[j].fi = state[idx[k]].fi
		} else if fi := state[idx[k]].fi; fi >= 0 && b.attr[fi] == nil {
			b.reason[fi] = ReasonOutside
		}
	}
	var ins []int
	for i := range state {
		if inRange[i] && state[i].fi >= 0 {
			ins = append(ins, i)
		}
	}
	b.matchMoves(ins, func(i int) uint64 { return state[i].fp }, func(i int) []byte { return b.norm[state[i].fi] }, before, func(i, j int) {
		before[j].fi = state[i].fi
		moved[i] = true
	})
	return before
}

// alignOutside relates a reconstructed version to a snapshot of the version
// the previous record left, across a change the ledger did not see.
func (b *blamer) alignOutside(cur []slot, snap []uint64) []slot {
	out := make([]slot, len(snap))
	for j, fp := range snap {
		out[j] = slot{fp: fp, fi: -1}
	}
	fps := make([]uint64, len(cur))
	for i, s := range cur {
		fps[i] = s.fp
	}
	for i, j := range align(fps, snap) {
		if j >= 0 {
			out[j].fi = cur[i].fi
		} else if fi := cur[i].fi; fi >= 0 && b.attr[fi] == nil {
			b.reason[fi] = ReasonOutside
		}
	}
	return out
}

// matchMoves pairs candidate lines (in order) with unmatched lines of target
// that have the same fingerprint: runs of two or more consecutive lines, or a
// single line with at least 8 non-blank bytes (a lone "}" proves nothing).
func (b *blamer) matchMoves(cands []int, fp func(int) uint64, text func(int) []byte, target []slot, link func(cand, j int)) {
	if len(cands) == 0 {
		return
	}
	free := map[uint64][]int{}
	for j, s := range target {
		if s.fi < 0 {
			free[s.fp] = append(free[s.fp], j)
		}
	}
	if len(free) == 0 {
		return
	}
	used := map[int]bool{}
	match := make([]int, len(cands))
	for k, c := range cands {
		match[k] = -1
		// Continue the previous candidate's run when possible.
		if k > 0 && cands[k-1] == c-1 && match[k-1] >= 0 {
			j := match[k-1] + 1
			if j < len(target) && target[j].fi < 0 && !used[j] && target[j].fp == fp(c) {
				match[k] = j
				used[j] = true
				continue
			}
		}
		for _, j := range free[fp(c)] {
			if !used[j] {
				match[k] = j
				used[j] = true
				break
			}
		}
	}
	for k, c := range cands {
		j := match[k]
		if j < 0 {
			continue
		}
		inRun := (k > 0 && cands[k-1] == c-1 && match[k-1] == j-1) || (k+1 < len(cands) && cands[k+1] == c+1 && match[k+1] == j+1)
		if inRun || nonBlank(text(c)) >= 8 {
			link(c, j)
		}
	}
}

func nonBlank(b []byte) int {
	n := 0
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v' {
			n++
		}
	}
	return n
}

// moveHypothesis pins the version before r when the lines r deleted are
// lines it inserted elsewhere, in one run (it moved them): it tries each such
// run at every place among the lines r kept, and accepts the one whose bytes
// hash to r's before_sha256. The work is bounded (256 MiB hashed).
func (b *blamer) moveHypothesis(state []slot, inRange []bool, u []slot, r *histRec, moved map[int]bool) ([]slot, bool) {
	for _, s := range state {
		if s.fi < 0 {
			return nil, false
		}
	}
	total := 0
	for _, s := range state {
		total += len(b.raw[s.fi])
	}
	tries := 0
	for start := 0; start < len(state); {
		if !inRange[start] {
			start++
			continue
		}
		end := start
		for end < len(state) && inRange[end] {
			end++
		}
		// The deleted lines may be any part of the run: the diff may have
		// kept the run's other lines by matching them elsewhere.
		for sub := start; r.deleted > 0 && sub+r.deleted <= end; sub++ {
			run := state[sub : sub+r.deleted]
			for g := 0; g <= len(u); g++ {
				if tries++; tries*total > 256<<20 {
					return nil, false
				}
				h := sha256.New()
				for _, s := range u[:g] {
					h.Write(b.raw[s.fi])
				}
				for _, s := range run {
					h.Write(b.raw[s.fi])
				}
				for _, s := range u[g:] {
					h.Write(b.raw[s.fi])
				}
				if hex.EncodeToString(h.Sum(nil)) == r.before {
					before := make([]slot, 0, len(u)+len(run))
					before = append(append(append(before, u[:g]...), run...), u[g:]...)
					for i := sub; i < sub+r.deleted; i++ {
						moved[i] = true
					}
					return before, true
				}
			}
		}
		start = end
	}
	return nil, false
}

// windows attributes by content what replay left, and credits moved code to
// where it came from.
func (b *blamer) windows() {
	// This file's own recorded ranges, by content hash.
	own := map[[32]byte][]*histRec{}
	lengths := map[int]bool{}
	maxLen := 0
	for _, h := range b.hist {
		for _, rg := range h.ranges {
			if sum, ok := decodeHash(rg.ContentHash); ok {
				own[sum] = append(own[sum], h)
				n := rg.EndLine - rg.StartLine + 1
				lengths[n] = true
				maxLen = max(maxLen, n)
			}
		}
	}
	eligible := func(i int) bool { return b.attr[i] == nil && b.reason[i] != ReasonPredates }
	type match struct {
		start, n int
		sum      [32]byte
	}
	var matches []match
	found := map[[32]byte]int{}
	b.eachWindow(eligible, maxLen, func(n int) bool { return lengths[n] }, func(start, n int, sum [32]byte) {
		if _, ok := own[sum]; ok {
			matches = append(matches, match{start, n, sum})
			found[sum]++
		}
	})
	// Newest record first; a range found at several places is ambiguous.
	best := make([]*histRec, len(b.norm))
	for _, m := range matches {
		if found[m.sum] > 1 {
			for i := m.start; i < m.start+m.n; i++ {
				if best[i] == nil {
					b.reason[i] = ReasonAmbiguous
				}
			}
			continue
		}
		recs := own[m.sum]
		h := recs[len(recs)-1]
		for i := m.start; i < m.start+m.n; i++ {
			if best[i] == nil || best[i].line < h.line {
				best[i] = h
			}
		}
	}
	for i, h := range best {
		if h != nil && recordAmbiguous(h.rec) {
			b.reason[i] = fmt.Sprintf(ReasonSessions, ShortID(h.rec.ID))
		} else if h != nil {
			b.attr[i] = h.attribution(EvidenceRange, "")
			b.reason[i] = ""
		}
	}
	if b.err == nil {
		b.elsewhere(256)
	}
}

func decodeHash(h string) ([32]byte, bool) {
	var sum [32]byte
	hx, ok := strings.CutPrefix(h, orchestration.HashPrefix)
	if !ok || len(hx) != 64 {
		return sum, false
	}
	_, err := hex.Decode(sum[:], []byte(hx))
	return sum, err == nil
}

// eachWindow calls fn with the SHA-256 (as ranges hash) of every run of up to
// maxWin consecutive lines i with ok(i) whose length want accepts.
func (b *blamer) eachWindow(ok func(int) bool, maxWin int, want func(int) bool, fn func(start, n int, sum [32]byte)) {
	var sum [32]byte
	for a := 0; a < len(b.norm); {
		if !ok(a) {
			a++
			continue
		}
		e := a
		for e < len(b.norm) && ok(e) {
			e++
		}
		for i := a; i < e; i++ {
			h := sha256.New()
			for n := 1; n <= maxWin && i+n <= e; n++ {
				h.Write(b.norm[i+n-1])
				h.Write([]byte{'\n'})
				if want(n) {
					h.Sum(sum[:0])
					fn(i, n, sum)
				}
			}
		}
		a = e
	}
}

// candidate is a record that recorded a range with some content hash, and
// the file it recorded it for.
type candidate struct {
	line int
	rec  *orchestration.Record
	path string
}

// elsewhere looks ranges recorded for other files up in the lines still
// unattributed, and in the lines a record inserted here (moved code).
func (b *blamer) elsewhere(maxWin int) {
	eligible := func(i int) bool {
		if b.reason[i] == ReasonPredates || b.reason[i] == ReasonAmbiguous {
			return false
		}
		return b.attr[i] == nil || (b.inserted[i] != nil && b.attr[i].Evidence == EvidenceReplay)
	}
	probe := b.rangeProbe()
	if probe == nil {
		return
	}
	type window struct {
		start, n int
		sum      [32]byte
	}
	var hits []window
	all := func(int) bool { return true }
	b.eachWindow(eligible, maxWin, all, func(start, n int, sum [32]byte) {
		if probe(binary.BigEndian.Uint64(sum[:8])) && b.nonTrivial(start, n) {
			hits = append(hits, window{start, n, sum})
		}
	})
	if len(hits) == 0 || b.err != nil {
		return
	}
	// A block must occur once in this file to say where it went.
	want := map[[32]byte]int{}
	for _, h := range hits {
		want[h.sum] = 0
	}
	b.eachWindow(func(int) bool { return true }, maxWin, all, func(_, _ int, sum [32]byte) {
		if n, ok := want[sum]; ok {
			want[sum] = n + 1
		}
	})
	type credit struct {
		window
		c candidate
	}
	var credits []credit
	cache := map[[32]byte][]candidate{}
	for _, h := range hits {
		if want[h.sum] != 1 {
			continue
		}
		cands, ok := cache[h.sum]
		if !ok {
			cands = b.lookupElsewhere(h.sum, h.n)
			cache[h.sum] = cands
		}
		// The lines a record inserted here can go to an older record only:
		// code that moved, not code copied onwards. Unattributed lines can
		// go to a record of another file (this file's own were tried).
		var ins *histRec
		mixed := false
		for i := h.start; i < h.start+h.n; i++ {
			if b.attr[i] == nil {
				continue
			}
			if ins != nil && b.inserted[i] != ins {
				mixed = true
			}
			ins = b.inserted[i]
		}
		if mixed {
			continue
		}
		var fit []candidate
		for _, c := range cands {
			switch {
			case ins != nil && c.line < ins.line && (c.path != b.path || ins.deleted >= h.n):
				fit = append(fit, c)
			case ins == nil && c.path != b.path:
				fit = append(fit, c)
			}
		}
		if len(fit) == 1 {
			credits = append(credits, credit{h, fit[0]})
		}
	}
	// Longer blocks first: they are the stronger evidence.
	sort.Slice(credits, func(i, j int) bool {
		if credits[i].n != credits[j].n {
			return credits[i].n > credits[j].n
		}
		return credits[i].start < credits[j].start
	})
	done := make([]bool, len(b.norm))
	for _, h := range credits {
		free := true
		for i := h.start; i < h.start+h.n; i++ {
			free = free && !done[i]
		}
		if !free {
			continue
		}
		if recordAmbiguous(h.c.rec) {
			continue
		}
		hr := newHist(h.c.line, h.c.rec, h.c.path)
		ev, from := EvidenceElsewhere, h.c.path
		switch {
		case h.c.path == b.path:
			ev, from = EvidenceMoved, ""
		case b.attr[h.start] != nil:
			ev = EvidenceMoved
		}
		for i := h.start; i < h.start+h.n; i++ {
			b.attr[i] = hr.attribution(ev, from)
			b.reason[i] = ""
			done[i] = true
		}
	}
}

// rangeProbe says whether some record may have recorded a range whose
// content hash starts with the given 8 bytes.
func (b *blamer) rangeProbe() func(uint64) bool {
	if b.ix == nil {
		set := map[uint64]bool{}
		add := func(rec *orchestration.Record) {
			for _, f := range rec.Files {
				for _, c := range f.Conversations {
					for _, r := range c.Ranges {
						if h8, ok := hashPrefix(r.ContentHash); ok {
							set[h8] = true
						}
					}
				}
			}
		}
		for _, h := range b.hist {
			add(h.rec)
		}
		for _, rec := range b.others {
			add(rec)
		}
		return func(h8 uint64) bool { return set[h8] }
	}
	return func(h8 uint64) bool {
		refs, err := b.ix.lookupRange(h8)
		if err != nil {
			b.err = err
			return false
		}
		return len(refs) > 0
	}
}

func (b *blamer) nonTrivial(start, n int) bool {
	total := 0
	for i := start; i < start+n; i++ {
		total += nonBlank(b.norm[i])
	}
	return total >= 16
}

// lookupElsewhere finds the distinct records that recorded a range of n
// lines with this content hash, in any file.
func (b *blamer) lookupElsewhere(sum [32]byte, n int) []candidate {
	want := orchestration.HashPrefix + hex.EncodeToString(sum[:])
	var out []candidate
	seen := map[int]bool{}
	add := func(line int, rec *orchestration.Record) {
		for _, f := range rec.Files {
			for _, c := range f.Conversations {
				for _, r := range c.Ranges {
					if r.ContentHash == want && r.EndLine-r.StartLine+1 == n && !seen[line] {
						seen[line] = true
						out = append(out, candidate{line: line, rec: rec, path: f.Path})
					}
				}
			}
		}
	}
	for _, h := range b.hist {
		add(h.line, h.rec)
	}
	if b.ix == nil {
		for line, rec := range b.others {
			add(line, rec)
		}
		return out
	}
	refs, err := b.ix.lookupRange(binary.BigEndian.Uint64(sum[:8]))
	if err != nil {
		b.err = err
		return nil
	}
	r, err := b.ix.reader()
	if err != nil {
		b.err = err
		return nil
	}
	defer r.Close()
	for _, ref := range refs {
		if ref.N != n || seen[ref.Line] {
			continue
		}
		rec, ok := b.others[ref.Line]
		if !ok {
			var err error
			if _, rec, err = r.read(ref.Line); err != nil {
				b.err = err
				return nil
			}
			b.others[ref.Line] = rec
		}
		if rec != nil && isChange(rec) {
			add(ref.Line, rec)
		}
	}
	return out
}
