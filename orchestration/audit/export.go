package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/orchestration"
)

// ParseShape reads a --format value: "agent-trace", or "trp1" (also "seed"),
// the seed specification's shape.
func ParseShape(s string) (orchestration.RecordShape, error) {
	switch s {
	case "agent-trace", "":
		return orchestration.ShapeAgentTrace, nil
	case "trp1", "seed":
		return orchestration.ShapeSeed, nil
	}
	return 0, fmt.Errorf("unknown format %q: want agent-trace or trp1", s)
}

// Export writes every record of the ledger to w in the given shape, one per
// line. Lines that are not records are left out and their numbers returned
// (verify says what is wrong with them). The chain links (prev) are kept as
// they are: they name lines of the ledger, not of the export.
func Export(ledger string, shape orchestration.RecordShape, w io.Writer) (n int, skipped []int, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	err = Scan(ledger, ScanOptions{Parse: true}, func(l *Line) error {
		if l.Rec == nil {
			if l.Complete {
				skipped = append(skipped, l.No)
			}
			return nil
		}
		b, err := orchestration.MarshalShape(l.Rec, shape)
		if err != nil {
			skipped = append(skipped, l.No)
			return nil
		}
		bw.Write(b)
		n++
		return bw.WriteByte('\n')
	})
	if err == nil {
		err = bw.Flush()
	}
	return n, skipped, err
}

// ImportResult says what Import did.
type ImportResult struct {
	Read       int // records in the input
	Appended   int
	Duplicates int // already in the ledger, or earlier in the input: skipped
}

// ImportError names the input line that stopped an import.
type ImportError struct {
	Line int
	Err  error
}

func (e *ImportError) Error() string { return fmt.Sprintf("input line %d: %v", e.Line, e.Err) }
func (e *ImportError) Unwrap() error { return e.Err }

// Import appends the records read from r (JSON Lines, in either shape) to the
// ledger through orchestration.Ledger, so each is linked into the chain: its
// prev is set to the ledger's last line, whatever it was in the source. A
// record whose id the ledger already has, or that came earlier in the input,
// is a duplicate and skipped, so importing the same file twice appends once.
// Every record is read and validated first: a bad one stops the import
// before anything is appended.
func Import(ledger string, r io.Reader) (*ImportResult, error) {
	var recs []*orchestration.Record
	res := &ImportResult{}
	n := 0
	err := scanReader(r, ScanOptions{Parse: true}, func(l *Line) error {
		n++
		if len(trimSpace(l.Raw)) == 0 {
			return nil
		}
		if !l.Complete { // a file need not end with a newline
			l.Rec, l.ParseErr = orchestration.ParseRecord(trimCR(l.Raw))
		}
		if l.ParseErr != nil {
			return &ImportError{Line: l.No, Err: l.ParseErr}
		}
		norm, err := orchestration.MarshalShape(l.Rec, orchestration.ShapeAgentTrace)
		if err != nil {
			return &ImportError{Line: l.No, Err: err}
		}
		if _, err := ValidateLine(norm, l.Rec); err != nil {
			return &ImportError{Line: l.No, Err: err}
		}
		recs = append(recs, l.Rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Read = len(recs)
	// Records go only after a tail that verify accepts: a ledger cut back
	// (its last lines deleted, a checkpoint lost) and then topped up with
	// imported records would otherwise look whole.
	if _, err := os.Stat(ledger); err == nil {
		vr, err := Verify(VerifyOptions{Ledger: ledger, NoDrift: true, NoRemote: true})
		if err != nil {
			return nil, err
		}
		if !vr.Intact {
			return nil, fmt.Errorf("%w: %s; nothing imported (repair the ledger, or seal it with --force once the damage is understood)", ErrNotIntact, vr.FirstBad)
		}
	}
	l, err := orchestration.OpenLedger(ledger)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	seen := map[string]bool{}
	err = withIndex(ledger, "", func(ix *Index) error {
		if len(recs) > 1000 { // many: one pass over the id tables beats a search each
			have, err := ix.ids()
			if err != nil {
				return err
			}
			for _, rec := range recs {
				if id, err := uuid.Parse(rec.ID); err == nil && have[id] {
					seen[rec.ID] = true
				}
			}
			return nil
		}
		for _, rec := range recs {
			line, err := ix.findID(rec.ID)
			if err != nil {
				return err
			}
			if line != 0 {
				seen[rec.ID] = true
			}
		}
		return nil
	})
	if errors.Is(err, ErrNoIndex) {
		want := map[string]bool{}
		for _, rec := range recs {
			want[rec.ID] = true
		}
		err = Scan(ledger, ScanOptions{Parse: true}, func(l *Line) error {
			if l.Rec != nil && want[l.Rec.ID] {
				seen[l.Rec.ID] = true
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	var fresh []*orchestration.Record
	for _, rec := range recs {
		if seen[rec.ID] {
			res.Duplicates++
			continue
		}
		seen[rec.ID] = true
		fresh = append(fresh, rec)
	}
	res.Appended, err = l.AppendAll(fresh)
	if err != nil {
		return res, fmt.Errorf("after %d records appended: %w", res.Appended, err)
	}
	return res, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// ImportOptions says where ImportInto appends.
type ImportOptions struct {
	Workspace string // "" means "."
	// Ledger "" means Workspace/.orchestration/agent_trace.jsonl, whose
	// intent map is brought up to date after the import; a ledger elsewhere
	// has no map of its own.
	Ledger string
}

// ImportInto is Import into a workspace's ledger, then the intent map
// brought up to date (the map is derived from the ledger). A map that could
// not be updated does not undo the import: it is returned as a warning.
func ImportInto(o ImportOptions, r io.Reader) (res *ImportResult, warning error, err error) {
	ws := o.Workspace
	if ws == "" {
		ws = "."
	}
	ledger := o.Ledger
	if ledger == "" {
		ledger = filepath.Join(ws, ".orchestration", orchestration.LedgerName)
	}
	if res, err = Import(ledger, r); err != nil {
		return nil, nil, err
	}
	if res.Appended > 0 && o.Ledger == "" {
		orch := filepath.Join(ws, ".orchestration")
		set, err := orchestration.LoadIntents(filepath.Join(orch, "active_intents.yaml"))
		if err == nil {
			err = orchestration.UpdateIntentMap(orch, set.Intents, nil, nil)
		}
		if err != nil {
			warning = fmt.Errorf("intent map not updated: %w", err)
		}
	}
	return res, warning, nil
}
