package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/intentgate/intentgate/internal/fsx"
	"github.com/intentgate/intentgate/internal/journal"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// Kinds of tampering, as verify names the first bad record. A hash chain
// alone cannot always tell an edited line from a deletion right after it;
// a sealed checkpoint, which keeps every line's hash, always can.
const (
	KindEdit           = "edit"
	KindDeletion       = "deletion"
	KindInsertion      = "insertion"
	KindReorder        = "reorder"
	KindTruncation     = "truncation"
	KindRewrite        = "rewrite"
	KindEditOrDeletion = "edit or deletion"
)

// Faults beyond the chain's own (orchestration.ChainFault).
const (
	FaultInvalid = "invalid" // parses, but is not an Agent Trace 0.1.0 record
	FaultSealed  = "sealed"  // contradicts a checkpoint
	FaultFork    = "fork"    // linked to an earlier line, and no git merge explains it
)

// Finding is one bad line.
type Finding struct {
	Line   int    `json:"line"` // 1-based
	Kind   string `json:"kind"`
	Fault  string `json:"fault"`
	Detail string `json:"detail"`
}

func (f Finding) String() string {
	return fmt.Sprintf("line %d: %s (%s): %s", f.Line, f.Kind, f.Fault, f.Detail)
}

// Fork is a record linked to an earlier line than the one before it.
type Fork struct {
	Line   int `json:"line"`
	Parent int `json:"parent"` // 0: it starts a new chain
}

// CheckpointCheck is one sealed checkpoint held against the ledger.
type CheckpointCheck struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Records int       `json:"records"`
	Bytes   int64     `json:"bytes"`
	OK      bool      `json:"ok"`
	Finding *Finding  `json:"finding,omitempty"`
}

// Drift statuses of a file: what became of the content its latest record
// wrote.
const (
	DriftUnchanged = "unchanged" // the file is byte for byte what the record left
	DriftHolds     = "holds"     // changed elsewhere; every recorded range still holds
	DriftMoved     = "moved"     // some ranges are found elsewhere in the file, none lost
	DriftChanged   = "changed"   // some recorded content is no longer in the file
	DriftDeleted   = "deleted"   // the file is gone, and no record deleted it
	DriftRemoved   = "removed"   // gone, as the latest record says
	DriftRecreated = "recreated" // the latest record deleted it, yet it exists
	DriftUnread    = "unreadable"
)

// RangeDrift is one recorded range of a file's latest record.
type RangeDrift struct {
	Start   int    `json:"start_line"`
	End     int    `json:"end_line"`
	Status  string `json:"status"`             // holds, moved, changed
	MovedTo int    `json:"moved_to,omitempty"` // the first line it is found at now
}

// FileDrift compares a file with its latest record.
type FileDrift struct {
	Path   string       `json:"path"`
	Record string       `json:"record"`
	Line   int          `json:"ledger_line"`
	Status string       `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Ranges []RangeDrift `json:"ranges,omitempty"`
}

// VerifyReport is everything verify found. Intact is the verdict: every line
// a valid record, the chain whole (forks allowed) and every checkpoint still
// a prefix of the ledger. A torn tail and content drift are reported but do
// not make a ledger tampered: the first is a crash or an append in progress,
// the second is the workspace moving on.
type VerifyReport struct {
	Ledger      string            `json:"ledger"`
	Intact      bool              `json:"intact"`
	Lines       int               `json:"lines"`
	Records     int               `json:"records"`
	SeedRecords int               `json:"seed_records,omitempty"`
	Bytes       int64             `json:"bytes"`
	FirstBad    *Finding          `json:"first_bad,omitempty"`
	Problems    []Finding         `json:"problems,omitempty"`
	Forks       []Fork            `json:"forks,omitempty"`
	Heads       []int             `json:"heads,omitempty"`
	TornTail    int               `json:"torn_tail,omitempty"`
	Checkpoints []CheckpointCheck `json:"checkpoints"`
	// CheckpointNote says why checkpoints were not checked (no repository).
	CheckpointNote string `json:"checkpoint_note,omitempty"`
	// Remote is the remote whose checkpoints were checked too; RemoteNote
	// says what became of that (none there, unreachable).
	Remote     string `json:"remote,omitempty"`
	RemoteNote string `json:"remote_note,omitempty"`
	// Anchored is the last checkpoint sealed on this machine, as kept
	// outside the workspace, when there is one.
	Anchored string `json:"anchored,omitempty"`
	// Unrecorded lists changes the journal says were made and have no
	// record: a crash came between the change and its record. They make
	// the ledger not intact until an intentgate process records them.
	Unrecorded []Unrecorded `json:"unrecorded,omitempty"`
	// Recovered lists records written for such changes on a later open.
	Recovered []Finding   `json:"recovered,omitempty"`
	Drift     []FileDrift `json:"drift"`
	Seconds   float64     `json:"seconds"`

	// What seal needs: the hash of every complete line from line sumsFrom+1,
	// and the SHA-256 of all complete lines' bytes.
	sums     [][32]byte
	sumsFrom int
	fullSHA  string
	lastLink string
}

// VerifyOptions says what to verify.
type VerifyOptions struct {
	// Workspace is the directory files are relative to (drift) and the git
	// repository is found from (checkpoints); "" means the directory above
	// the ledger's .orchestration.
	Workspace string
	Ledger    string // "" means Workspace/.orchestration/agent_trace.jsonl
	NoDrift   bool
	// Progress is called now and then with the bytes read and the total.
	Progress func(read, total int64)
	Workers  int
	// Remote is the git remote whose refs/intentgate/checkpoints verify
	// fetches and holds the ledger against too; "" means origin when the
	// repository has one. NoRemote skips it.
	Remote   string
	NoRemote bool

	sumsFrom int  // for seal: keep line hashes after this many lines
	wantSums bool // and the hash of the whole
	// each, if set, sees every complete line that parsed, in order (the
	// report reads the ledger in the same pass).
	each func(l *Line)
}

func (o *VerifyOptions) paths() (ws, ledger string) {
	ws, ledger = o.Workspace, o.Ledger
	switch {
	case ledger == "" && ws == "":
		ws = "."
		ledger = filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	case ledger == "":
		ledger = filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	case ws == "":
		ws = filepath.Dir(filepath.Dir(ledger))
	}
	return ws, ledger
}

// Verify reads the ledger once and reports whether it is intact.
func Verify(o VerifyOptions) (*VerifyReport, error) {
	start := time.Now()
	ws, path := o.paths()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	rep := &VerifyReport{Ledger: path, Checkpoints: []CheckpointCheck{}, Drift: []FileDrift{}}

	var cps []*Checkpoint
	repo, err := gitRepo(ws)
	if err != nil {
		return nil, err
	}
	if repo == nil {
		rep.CheckpointNote = "not in a git repository: no checkpoints"
	} else {
		key, err := ledgerKey(repo, path)
		if err != nil {
			return nil, err
		}
		if cps, err = loadCheckpoints(repo, key); err != nil {
			return nil, err
		}
		more, err := anchorCheck(rep, repo, ws, key, cps, o)
		if err != nil {
			return nil, err
		}
		cps = append(cps, more...)
	}
	cv := newCheckpointVerifier(cps)
	chain := newFastChain()
	var invalid []Finding
	var latest map[string]*driftRef2
	if !o.NoDrift {
		latest = map[string]*driftRef2{}
	}
	if o.wantSums {
		rep.sumsFrom = o.sumsFrom
	}
	fullHash := sha256.New()
	total := fi.Size()
	var progress func(int64)
	if o.Progress != nil {
		progress = func(read int64) { o.Progress(read, total) }
	}
	if _, err := compiledSchema(); err != nil {
		return nil, err
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ws2 := make([]verifyWorker, workers)
	for i := range ws2 {
		ws2[i] = verifyWorker{drift: !o.NoDrift, recs: o.each != nil}
	}
	var lastSum [32]byte
	err = runChunks(path, chunkOptions{workers: workers, keep: o.each != nil, progress: progress},
		func(w int, c *lineChunk) *verifyChunk { return ws2[w].chunk(c) },
		func(c *lineChunk, vc *verifyChunk) error {
			base := chain.rep.Lines
			rep.Bytes += int64(len(c.data))
			if o.wantSums {
				fullHash.Write(c.data)
			}
			ni := 0
			for k := range vc.lines {
				l := &vc.lines[k]
				no := base + k + 1
				end := len(c.data)
				if k+1 < len(vc.at) {
					end = int(vc.at[k+1])
				}
				full := c.data[vc.at[k]:end]
				raw := trimCR(full[:len(full)-1])
				cv.line(l.sum, full)
				if o.wantSums && no > o.sumsFrom {
					rep.sums = append(rep.sums, l.sum)
				}
				var parseErr, badPrev string
				for ; ni < len(vc.notes) && vc.notes[ni].k == k; ni++ {
					n := vc.notes[ni]
					switch n.kind {
					case noteParseErr:
						parseErr = n.text
					case noteBadPrev:
						badPrev = n.text
					case noteInvalid:
						invalid = append(invalid, Finding{Line: no, Fault: FaultInvalid, Detail: n.text})
					case noteRecovered:
						rep.Recovered = append(rep.Recovered, Finding{Line: no, Kind: "recovered", Fault: "unrecorded", Detail: n.text})
					}
				}
				chain.add(l, raw, parseErr, badPrev)
				if l.flags&chainSeed != 0 {
					rep.SeedRecords++
				}
				if o.each != nil && vc.recs[k] != nil {
					o.each(&Line{No: no, Off: c.off + int64(vc.at[k]), Full: full, Raw: raw, Sum: l.sum, Complete: true, Rec: vc.recs[k]})
				}
				lastSum = l.sum
			}
			for _, d := range vc.drift {
				no := base + d.k + 1
				off := c.off + int64(vc.at[d.k])
				if r := latest[string(d.path)]; r != nil {
					r.line, r.off = no, off
				} else {
					latest[string(d.path)] = &driftRef2{line: no, off: off}
				}
			}
			if c.torn != nil {
				chain.torn(len(c.torn))
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if o.wantSums && chain.rep.Lines > 0 {
		rep.lastLink = lastLink(lastSum)
	}
	cr := chain.report()
	rep.Lines, rep.Records, rep.TornTail, rep.Heads = cr.Lines, cr.Records, cr.TornTail, cr.Heads
	for _, f := range cr.Forks {
		rep.Forks = append(rep.Forks, Fork{Line: f.Line, Parent: f.Parent})
	}
	if o.wantSums {
		rep.fullSHA = hex.EncodeToString(fullHash.Sum(nil))
	}

	// Each problem gets the kind the chain suggests; a checkpoint, which
	// knows every sealed line, says exactly what happened where it reaches.
	forkOf := map[int]int{}
	for _, f := range cr.Forks {
		forkOf[f.Line] = f.Parent
	}
	for _, p := range cr.Problems {
		rep.Problems = append(rep.Problems, Finding{Line: p.Line, Kind: chainKind(string(p.Fault), p.Line, forkOf), Fault: string(p.Fault), Detail: p.Detail})
	}
	for _, f := range invalid {
		f.Kind = chainKind(f.Fault, f.Line, forkOf)
		rep.Problems = append(rep.Problems, f)
	}
	// A fork is a union merge's doing only where git's history shows the
	// merge; anywhere else a record was inserted with a valid prev.
	var explained map[int]bool
	if repo != nil && len(rep.Forks) > 0 {
		key, _ := ledgerKey(repo, path)
		if explained, err = mergedForks(repo, key, rep.Forks, chain.LineSum); err != nil {
			return nil, err
		}
	}
	for _, f := range rep.Forks {
		if explained[f.Line] {
			continue
		}
		d := fmt.Sprintf("links to line %d, not to the line before it, and no git merge of two branches of the ledger explains that: a record was inserted", f.Parent)
		if f.Parent == 0 {
			d = "starts a new chain, and no git merge of two branches of the ledger explains that: a record was inserted"
		}
		if repo == nil {
			d += " (not in a git repository: no fork can be a merge)"
		}
		rep.Problems = append(rep.Problems, Finding{Line: f.Line, Kind: KindInsertion, Fault: FaultFork, Detail: d})
	}
	rep.Checkpoints = cv.finish()
	for _, c := range rep.Checkpoints {
		if c.Finding != nil {
			rep.Problems = append(rep.Problems, *c.Finding)
		}
	}
	sort.SliceStable(rep.Problems, func(a, b int) bool {
		pa, pb := rep.Problems[a], rep.Problems[b]
		if pa.Line != pb.Line {
			return pa.Line < pb.Line
		}
		return pa.Fault == FaultSealed && pb.Fault != FaultSealed
	})
	if len(rep.Problems) > 0 {
		f := rep.Problems[0]
		rep.FirstBad = &f
	}
	rep.Unrecorded = readUnrecorded(filepath.Join(filepath.Dir(path), "journal"))
	rep.Intact = rep.FirstBad == nil && len(rep.Unrecorded) == 0

	if !o.NoDrift {
		sources, err := driftSources(path, latest, chain)
		if err != nil {
			return nil, err
		}
		rep.Drift = computeDrift(ws, sources)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// chainKind names what probably happened at a line the chain rejects.
func chainKind(fault string, line int, forkOf map[int]int) string {
	// The next record linking past this line to the one before it means
	// this line was not there when the next one was appended.
	inserted := func() bool { p, ok := forkOf[line+1]; return ok && p == line-1 && line > 1 }
	switch orchestration.ChainFault(fault) {
	case orchestration.ChainDuplicate:
		return KindInsertion
	case orchestration.ChainReordered:
		return KindReorder
	case orchestration.ChainBroken:
		switch {
		case line == 1:
			return KindDeletion
		case inserted():
			return KindInsertion
		}
		return KindEditOrDeletion
	}
	if inserted() {
		return KindInsertion
	}
	return KindEdit
}

// checkpointVerifier holds the ledger against the checkpoints as it streams:
// a running SHA-256 of the bytes up to the furthest checkpoint, and the line
// hashes that far, to say what changed.
type checkpointVerifier struct {
	cps    []*Checkpoint // by Bytes
	next   int
	h      hash.Hash
	end    int64 // bytes hashed
	limit  int64
	sums   [][32]byte
	keep   int
	lines  int
	result map[*Checkpoint]*CheckpointCheck
}

func newCheckpointVerifier(cps []*Checkpoint) *checkpointVerifier {
	v := &checkpointVerifier{h: sha256.New(), result: map[*Checkpoint]*CheckpointCheck{}}
	v.cps = append(v.cps, cps...)
	sort.SliceStable(v.cps, func(i, j int) bool { return v.cps[i].Bytes < v.cps[j].Bytes })
	for _, c := range v.cps {
		v.limit = max(v.limit, c.Bytes)
		v.keep = max(v.keep, c.Records+2)
	}
	return v
}

func (v *checkpointVerifier) line(sum [32]byte, full []byte) {
	v.lines++
	if v.lines <= v.keep {
		v.sums = append(v.sums, sum)
	}
	if v.end >= v.limit {
		return
	}
	v.h.Write(full)
	v.end += int64(len(full))
	for v.next < len(v.cps) && v.cps[v.next].Bytes <= v.end {
		c := v.cps[v.next]
		v.next++
		ok := c.Bytes == v.end && c.Records == v.lines && hex.EncodeToString(v.h.Sum(nil)) == c.SHA256
		v.result[c] = &CheckpointCheck{OK: ok}
	}
}

func (v *checkpointVerifier) finish() []CheckpointCheck {
	out := make([]CheckpointCheck, 0, len(v.cps))
	for _, c := range v.cps {
		r := v.result[c]
		if r == nil { // the ledger ends before the checkpoint's bytes
			r = &CheckpointCheck{}
		}
		r.Commit, r.Time, r.Records, r.Bytes = c.Commit, c.Time, c.Records, c.Bytes
		if !r.OK {
			f := v.locate(c)
			r.Finding = &f
		}
		out = append(out, *r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// locate says what changed in the sealed lines of c.
func (v *checkpointVerifier) locate(c *Checkpoint) Finding {
	f := Finding{Fault: FaultSealed}
	at := fmt.Sprintf("checkpoint %.12s (%s, %d records)", c.Commit, c.Time.UTC().Format(time.RFC3339), c.Records)
	if c.lines == nil {
		f.Line, f.Kind = 1, KindRewrite
		f.Detail = at + ": the sealed bytes changed; its line hashes are not available to say where"
		if int64(v.lines) < int64(c.Records) {
			f.Line, f.Kind = v.lines+1, KindTruncation
		}
		return f
	}
	s, cur := c.lines, v.sums
	i := 0
	for i < len(s) && i < len(cur) && s[i] == cur[i] {
		i++
	}
	f.Line = i + 1
	switch {
	case i == len(s):
		// Every sealed line is still there: only bytes between them
		// (line terminators) changed.
		f.Line, f.Kind = len(s), KindEdit
		f.Detail = at + ": the sealed lines' terminators changed"
	case i >= len(cur):
		f.Kind = KindTruncation
		f.Detail = fmt.Sprintf("%s: the ledger ends after line %d; lines %d-%d that were sealed are gone (truncated or rolled back)", at, len(cur), i+1, len(s))
	case i+1 < len(s) && i+1 < len(cur) && cur[i] == s[i+1] && cur[i+1] == s[i]:
		f.Kind = KindReorder
		f.Detail = fmt.Sprintf("%s: sealed lines %d and %d are swapped", at, i+1, i+2)
	case i+1 < len(s) && cur[i] == s[i+1]:
		f.Kind = KindDeletion
		f.Detail = fmt.Sprintf("%s: sealed line %d was deleted", at, i+1)
	case i+1 < len(cur) && cur[i+1] == s[i]:
		f.Kind = KindInsertion
		f.Detail = fmt.Sprintf("%s: line %d was inserted before sealed line %d", at, i+1, i+1)
	case i+1 == len(s) || (i+1 < len(cur) && i+1 < len(s) && cur[i+1] == s[i+1]):
		f.Kind = KindEdit
		f.Detail = fmt.Sprintf("%s: sealed line %d was edited", at, i+1)
	default:
		inCur := indexFrom(cur, i, s[i])
		inSealed := indexFrom(s, i, cur[i])
		switch {
		case inCur > 0:
			f.Kind = KindInsertion
			f.Detail = fmt.Sprintf("%s: lines %d-%d were inserted before sealed line %d", at, i+1, inCur, i+1)
		case inSealed > 0:
			f.Kind = KindDeletion
			f.Detail = fmt.Sprintf("%s: sealed lines %d-%d were deleted", at, i+1, inSealed)
		default:
			f.Kind = KindRewrite
			f.Detail = fmt.Sprintf("%s: the ledger was rewritten from line %d on", at, i+1)
		}
	}
	return f
}

func indexFrom(s [][32]byte, from int, h [32]byte) int {
	for j := from; j < len(s); j++ {
		if s[j] == h {
			return j
		}
	}
	return -1
}

// driftSource is the latest record that changed a file.
type driftSource struct {
	line     int
	id       string
	mutation string
	after    string
	ranges   []orchestration.Range
}

// driftRef2 is where the latest change record of a path is.
type driftRef2 struct {
	line int
	off  int64
}

// driftSources reads again, by offset, the latest change record of each
// path (checked against the hash the chain kept of its line): one record a
// file instead of one a line.
func driftSources(path string, latest map[string]*driftRef2, chain *fastChain) (map[string]*driftSource, error) {
	out := make(map[string]*driftSource, len(latest))
	if len(latest) == 0 {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer f.Close()
	for p, r := range latest {
		raw, ok := lineAt(f, r.off)
		if !ok || sha256.Sum256(raw) != chain.LineSum(r.line) {
			return nil, fmt.Errorf("ledger: %s changed while it was verified (line %d is no longer what was read); run verify again", path, r.line)
		}
		rec, ok := orchestration.ParseCanonical(raw)
		if !ok {
			if rec, err = orchestration.ParseRecord(raw); err != nil {
				return nil, fmt.Errorf("ledger: %s changed while it was verified (line %d: %v); run verify again", path, r.line, err)
			}
		}
		for _, fl := range rec.Files {
			if fl.Path != p {
				continue
			}
			d := &driftSource{line: r.line, id: rec.ID}
			if rec.Meta != nil {
				d.mutation, d.after = rec.Meta.Mutation, rec.Meta.AfterSHA256
			}
			for _, c := range fl.Conversations {
				d.ranges = append(d.ranges, c.Ranges...)
			}
			out[p] = d
		}
	}
	return out, nil
}

// lineAt reads the line that starts at off, without its newline.
func lineAt(f *os.File, off int64) ([]byte, bool) {
	buf := make([]byte, 4096)
	var line []byte
	for {
		n, err := f.ReadAt(buf, off+int64(len(line)))
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return trimCR(append(line, buf[:i]...)), true
		}
		line = append(line, buf[:n]...)
		if err != nil {
			return nil, false
		}
	}
}

// isChange reports whether rec records a change of the workspace (allowed,
// or a violation that happened anyway), not a refusal.
func isChange(rec *orchestration.Record) bool {
	if rec.Meta == nil {
		return len(rec.Files) > 0
	}
	return rec.Meta.Decision != orchestration.DecisionDeny && rec.Meta.Mutation != orchestration.MutationDenial
}

func computeDrift(ws string, latest map[string]*driftSource) []FileDrift {
	out := make([]FileDrift, 0, len(latest))
	root, err := os.OpenRoot(ws)
	if err != nil {
		return out
	}
	defer root.Close()
	paths := make([]string, 0, len(latest))
	for p := range latest {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		src := latest[p]
		d := FileDrift{Path: p, Record: src.id, Line: src.line}
		content, err := snap.ReadRooted(root, p)
		deleted := src.mutation == orchestration.MutationDelete
		switch {
		case errors.Is(err, fs.ErrNotExist) && deleted:
			d.Status = DriftRemoved
		case errors.Is(err, fs.ErrNotExist):
			d.Status = DriftDeleted
		case err != nil:
			d.Status, d.Detail = DriftUnread, err.Error()
		case deleted:
			d.Status = DriftRecreated
		case src.after != "" && snap.SHA256Hex(content) == src.after:
			d.Status = DriftUnchanged
		default:
			d.Status, d.Ranges = rangeDrift(content, src.ranges)
		}
		out = append(out, d)
	}
	return out
}

// rangeDrift checks each range at its recorded place, then anywhere else in
// the file by its content hash.
func rangeDrift(content []byte, ranges []orchestration.Range) (string, []RangeDrift) {
	lines := splitLines(content)
	status := DriftHolds
	out := make([]RangeDrift, 0, len(ranges))
	for _, r := range ranges {
		rd := RangeDrift{Start: r.StartLine, End: r.EndLine}
		n := r.EndLine - r.StartLine + 1
		switch {
		case r.ContentHash == "":
			rd.Status = DriftHolds // nothing to check against
		case r.EndLine <= len(lines) && hashLines(lines[r.StartLine-1:r.EndLine]) == r.ContentHash:
			rd.Status = DriftHolds
		default:
			rd.Status = DriftChanged
			if at := findWindow(lines, n, r.ContentHash); at > 0 {
				rd.Status, rd.MovedTo = DriftMoved, at
			}
		}
		switch {
		case rd.Status == DriftChanged:
			status = DriftChanged
		case rd.Status == DriftMoved && status == DriftHolds:
			status = DriftMoved
		}
		out = append(out, rd)
	}
	return status, out
}

// findWindow returns the first line (1-based) where n lines hash to want, or 0.
func findWindow(lines [][]byte, n int, want string) int {
	if n <= 0 || n > len(lines) {
		return 0
	}
	for i := 0; i+n <= len(lines); i++ {
		if hashLines(lines[i:i+n]) == want {
			return i + 1
		}
	}
	return 0
}

// splitLines splits content the way ranges count lines: on "\n", a last line
// without one still a line, "\r\n" as "\n". The lines alias content.
func splitLines(content []byte) [][]byte {
	if len(content) == 0 {
		return nil
	}
	var lines [][]byte
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		if i < 0 {
			lines = append(lines, content)
			break
		}
		lines = append(lines, trimCR(content[:i]))
		content = content[i+1:]
	}
	return lines
}

// hashLines is orchestration.RangeHash over lines already split.
func hashLines(lines [][]byte) string {
	h := sha256.New()
	for _, l := range lines {
		h.Write(l)
		h.Write([]byte{'\n'})
	}
	return orchestration.HashPrefix + hex.EncodeToString(h.Sum(nil))
}

// anchorCheck holds the local checkpoint chain against what is anchored
// beyond the workspace: the last seal made on this machine and the team's
// remote. It returns the checkpoints the ledger must also satisfy (those the
// local chain lost), and adds a finding for a chain that lost them.
func anchorCheck(rep *VerifyReport, repo *git.Repository, ws, key string, local []*Checkpoint, o VerifyOptions) ([]*Checkpoint, error) {
	have := map[string]bool{}
	for _, c := range local {
		have[c.Commit] = true
	}
	var extra []*Checkpoint
	anc, err := loadAnchor(ws, key)
	if err != nil {
		return nil, err
	}
	if anc != nil {
		rep.Anchored = fmt.Sprintf("%.12s %s %d records", anc.Commit, anc.Time.UTC().Format(time.RFC3339), anc.Records)
		if !have[anc.Commit] {
			rep.Problems = append(rep.Problems, Finding{Line: anc.Records, Kind: KindTruncation, Fault: FaultAnchor,
				Detail: fmt.Sprintf("the last checkpoint sealed on this machine (%.12s, %s, %d records) is no longer on %s: the ref was deleted or moved back", anc.Commit, anc.Time.UTC().Format(time.RFC3339), anc.Records, CheckpointRef)})
			extra = append(extra, anc.checkpoint())
			have[anc.Commit] = true
		}
	}
	remote := o.Remote
	if remote == "" && !o.NoRemote {
		remote = defaultRemote(repo)
	}
	if remote == "" || o.NoRemote {
		return extra, nil
	}
	rep.Remote = remote
	found, err := fetchRemoteCheckpoints(ws, remote)
	switch {
	case err != nil:
		rep.RemoteNote = "could not fetch its checkpoints: " + err.Error()
		return extra, nil
	case !found:
		rep.RemoteNote = "it has no checkpoints (intentgate trace seal --push sends them)"
		return extra, nil
	}
	rcps, err := loadCheckpointsAt(repo, remoteRef(remote), key)
	if err != nil {
		return nil, err
	}
	missing := 0
	for _, c := range rcps {
		if !have[c.Commit] {
			missing++
			extra = append(extra, c)
			have[c.Commit] = true
		}
	}
	if missing > 0 {
		last := rcps[len(rcps)-1]
		rep.RemoteNote = fmt.Sprintf("%d of its checkpoints are not in the local chain (the latest %.12s, %d records): the local ref is behind; they are checked against the ledger too", missing, last.Commit, last.Records)
	}
	return extra, nil
}

// Unrecorded is a change the journal holds and the ledger does not.
type Unrecorded struct {
	Path    string    `json:"path"`
	Session string    `json:"session,omitempty"`
	CallID  string    `json:"call_id,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Time    time.Time `json:"time"`
}

// readUnrecorded reads the change journal (engine.JournalDir): each pending
// entry is a change made whose record is not in the ledger yet. Entries are
// in slots (internal/journal) or, from older builds, one JSON file each.
func readUnrecorded(dir string) []Unrecorded {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Unrecorded
	for _, de := range entries {
		slot := strings.HasSuffix(de.Name(), journal.SlotSuffix)
		if !de.Type().IsRegular() || filepath.Ext(de.Name()) != ".json" && !slot {
			continue
		}
		b, err := readJournalFile(filepath.Join(dir, de.Name()))
		if err != nil {
			continue
		}
		if slot {
			var st journal.State
			if b, st = journal.ParseSlot(b); st != journal.InFlight {
				continue
			}
		}
		var u Unrecorded
		if json.Unmarshal(b, &u) == nil && u.Path != "" {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// readJournalFile reads a journal file, regular and not through a link,
// at most twice a slot's bound.
func readJournalFile(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|fsx.NoFollow|fsx.NonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, 2*journal.MaxEntry))
}
