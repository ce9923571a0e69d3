package orchestration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Child processes of the multi-process tests run TestLedgerHelperProcess
// with these set.
const (
	ledgerTestChildEnv = "INTENTGATE_TEST_LEDGER_CHILD" // the mode
	ledgerTestPathEnv  = "INTENTGATE_TEST_LEDGER_PATH"
)

// ledgerTestRecord is a change record of intent, numbered n.
func ledgerTestRecord(t testing.TB, intent string, n int) *Record {
	t.Helper()
	rec, err := NewRecord(RecordInput{
		Time:     time.Date(2026, 2, 16, 12, 0, n%60, 0, time.UTC),
		Revision: "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0", ToolVersion: "test",
		Model: "anthropic/claude-opus-4-5", AgentName: "test",
		Path:   fmt.Sprintf("src/file%d.go", n%7),
		Ranges: []Range{{StartLine: n%50 + 1, EndLine: n%50 + 3, ContentHash: HashLines(strconv.Itoa(n))}},
		Meta:   Meta{Intent: intent, Session: "s1", CallID: "c" + strconv.Itoa(n), Tool: "write_to_file", Mutation: MutationModify},
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// ledgerTestBuild appends n records to a new ledger and returns its path.
func ledgerTestBuild(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		if err := l.Append(ledgerTestRecord(t, "INT-001", i)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func ledgerTestLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte{'\n'})[:bytes.Count(b, []byte{'\n'})]
}

func ledgerTestWrite(t *testing.T, path string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ledgerTestVerify(t *testing.T, path string) *ChainReport {
	t.Helper()
	rep, err := VerifyChain(path)
	if err != nil {
		t.Fatalf("VerifyChain: %v", err)
	}
	return rep
}

func TestLedgerChain(t *testing.T) {
	path := ledgerTestBuild(t, 8)
	rep := ledgerTestVerify(t, path)
	if !rep.OK() || rep.Lines != 8 || rep.Records != 8 || len(rep.Forks) != 0 || len(rep.Heads) != 0 || rep.TornTail != 0 {
		t.Fatalf("VerifyChain(clean) = %+v", rep)
	}
	lines := ledgerTestLines(t, path)
	if rec, _ := ReadLedgerLine(lines[0]); rec.Meta.Prev != "" {
		t.Errorf("first record's prev = %q, want empty", rec.Meta.Prev)
	}
	for i := 1; i < len(lines); i++ {
		rec, err := ReadLedgerLine(lines[i])
		if err != nil {
			t.Fatal(err)
		}
		if want := rangesTestSHA(strings.TrimSuffix(string(lines[i-1]), "\n")); rec.Meta.Prev != want {
			t.Errorf("line %d prev = %s, want %s", i+1, rec.Meta.Prev, want)
		}
	}

	edit := func(i int, from, to string) [][]byte {
		out := append([][]byte(nil), lines...)
		out[i] = bytes.Replace(lines[i], []byte(from), []byte(to), 1)
		if bytes.Equal(out[i], lines[i]) {
			t.Fatalf("edit of line %d changed nothing", i+1)
		}
		return out
	}
	without := func(from, to int) [][]byte { // drops lines[from:to]
		return append(append([][]byte(nil), lines[:from]...), lines[to:]...)
	}
	insert := func(at int, line []byte) [][]byte {
		out := append([][]byte(nil), lines[:at]...)
		return append(append(out, line), lines[at:]...)
	}
	forged := ledgerTestRecord(t, "INT-001", 99)
	forged.Meta.Prev = HashLines("made up")
	forgedLine, _ := MarshalShape(forged, ShapeAgentTrace)
	forgedLine = append(forgedLine, '\n')

	tests := []struct {
		name     string
		lines    [][]byte
		firstBad int
		fault    ChainFault
	}{
		{"edited record", edit(2, `"c2"`, `"c9"`), 4, ChainBroken},
		{"edited into garbage", edit(2, `{"version"`, `{"versio`), 3, ChainUnparsable},
		{"deleted line", without(2, 3), 3, ChainBroken},
		{"deleted first line", without(0, 1), 1, ChainBroken},
		{"truncated in the middle", without(2, 6), 3, ChainBroken},
		{"line cut short in the middle", func() [][]byte {
			out := append([][]byte(nil), lines...)
			out[4] = append(append([]byte(nil), lines[4][:len(lines[4])/2]...), '\n')
			return out
		}(), 5, ChainUnparsable},
		{"copied line inserted", insert(5, lines[1]), 6, ChainDuplicate},
		{"forged line inserted", insert(3, forgedLine), 4, ChainBroken},
		{"swapped lines", func() [][]byte {
			out := append([][]byte(nil), lines...)
			out[2], out[3] = out[3], out[2]
			return out
		}(), 3, ChainReordered},
		{"foreign record", insert(3, []byte(`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[]}`+"\n")), 4, ChainUnlinked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), LedgerName)
			ledgerTestWrite(t, p, tt.lines)
			rep := ledgerTestVerify(t, p)
			if rep.OK() || rep.FirstBad != tt.firstBad || rep.Problems[0].Fault != tt.fault {
				t.Fatalf("VerifyChain = %v (%+v); want first bad line %d, %s", rep, rep.Problems, tt.firstBad, tt.fault)
			}
			t.Logf("%v", rep)
		})
	}
}

// A ledger git's union merge made from two branches verifies, and its forks
// are reported.
func TestLedgerUnionMerge(t *testing.T) {
	base := ledgerTestBuild(t, 3)
	branch := func(intent string) [][]byte {
		p := filepath.Join(t.TempDir(), LedgerName)
		b, _ := os.ReadFile(base)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := OpenLedger(p)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for i := range 3 {
			if err := l.Append(ledgerTestRecord(t, intent, 10+i)); err != nil {
				t.Fatal(err)
			}
		}
		return ledgerTestLines(t, p)[3:]
	}
	prefix := ledgerTestLines(t, base)
	a, b := branch("INT-A"), branch("INT-B")

	tests := []struct {
		name  string
		lines [][]byte
		forks []ChainFork
		heads []int
	}{
		{"ours then theirs", [][]byte{prefix[0], prefix[1], prefix[2], a[0], a[1], a[2], b[0], b[1], b[2]},
			[]ChainFork{{Line: 7, Parent: 3}}, []int{6}},
		{"interleaved", [][]byte{prefix[0], prefix[1], prefix[2], a[0], b[0], a[1], b[1], a[2], b[2]},
			[]ChainFork{{Line: 5, Parent: 3}, {Line: 6, Parent: 4}, {Line: 7, Parent: 5}, {Line: 8, Parent: 6}, {Line: 9, Parent: 7}}, []int{8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), LedgerName)
			ledgerTestWrite(t, p, tt.lines)
			rep := ledgerTestVerify(t, p)
			if !rep.OK() || !reflect.DeepEqual(rep.Forks, tt.forks) || !reflect.DeepEqual(rep.Heads, tt.heads) {
				t.Fatalf("VerifyChain = %v, forks %v, heads %v; want OK, forks %v, heads %v", rep, rep.Forks, rep.Heads, tt.forks, tt.heads)
			}
			// Appending after the merge links to the merged last line.
			l, err := OpenLedger(p)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if err := l.Append(ledgerTestRecord(t, "INT-C", 20)); err != nil {
				t.Fatal(err)
			}
			if rep2 := ledgerTestVerify(t, p); !rep2.OK() || len(rep2.Forks) != len(tt.forks) || rep2.Lines != 10 {
				t.Fatalf("after an append: %v", rep2)
			}
		})
	}
}

func TestLedgerTornTail(t *testing.T) {
	path := ledgerTestBuild(t, 3)
	whole, _ := os.ReadFile(path)
	rec := ledgerTestRecord(t, "INT-001", 3)
	line, _ := MarshalShape(rec, ShapeAgentTrace)
	half := line[:len(line)/2]
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(half)
	f.Close()

	rep := ledgerTestVerify(t, path)
	if !rep.OK() || rep.TornTail != len(half) || rep.Lines != 3 {
		t.Fatalf("VerifyChain(torn) = %v, want OK with a torn tail of %d bytes", rep, len(half))
	}
	var sawTorn bool
	ScanLedger(path, func(n int, raw []byte, rec *Record, err error) error {
		if errors.Is(err, ErrTornTail) {
			sawTorn = n == 4 && bytes.Equal(raw, half)
		}
		return nil
	})
	if !sawTorn {
		t.Errorf("ScanLedger did not pass the torn tail as line 4 with ErrTornTail")
	}

	l, err := OpenLedger(path)
	if err != nil {
		t.Fatalf("OpenLedger: %v", err)
	}
	defer l.Close()
	if got, _ := os.ReadFile(path); !bytes.Equal(got, whole) {
		t.Errorf("after OpenLedger the ledger is\n%s\nwant the 3 whole lines\n%s", got, whole)
	}
	if got, _ := os.ReadFile(path + ".broken"); string(got) != string(half)+"\n" {
		t.Errorf(".broken = %q, want %q", got, string(half)+"\n")
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.TornTail != 0 || rep.Lines != 3 {
		t.Errorf("VerifyChain(repaired) = %v", rep)
	}

	// A tail torn while a Ledger is open is repaired by the next Append.
	f, _ = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte(`{"version":"0.1`))
	f.Close()
	if err := l.Append(rec); err != nil {
		t.Fatal(err)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.TornTail != 0 || rep.Lines != 4 || len(rep.Forks) != 0 {
		t.Errorf("VerifyChain(after Append over a torn tail) = %v", rep)
	}
	if got, _ := os.ReadFile(path + ".broken"); string(got) != string(half)+"\n"+`{"version":"0.1`+"\n" {
		t.Errorf(".broken = %q, want both fragments, one per line", got)
	}
}

func TestLedgerOnlyTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerName)
	os.WriteFile(path, []byte(`{"vers`), 0o644)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rec := ledgerTestRecord(t, "INT-001", 1)
	if err := l.Append(rec); err != nil {
		t.Fatal(err)
	}
	if rec.Meta.Prev != "" {
		t.Errorf("prev = %q after the only line was torn, want empty", rec.Meta.Prev)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 1 {
		t.Errorf("VerifyChain = %v", rep)
	}
}

// Damage that is not a torn tail is reported, never repaired.
func TestLedgerDamageIsNotRepaired(t *testing.T) {
	path := ledgerTestBuild(t, 4)
	lines := ledgerTestLines(t, path)
	lines[1] = []byte("not json at all\n")
	ledgerTestWrite(t, path, lines)
	before, _ := os.ReadFile(path)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("OpenLedger changed a damaged ledger")
	}
	if _, err := os.Stat(path + ".broken"); err == nil {
		t.Errorf("OpenLedger wrote a .broken file for damage in the middle")
	}
	if rep := ledgerTestVerify(t, path); rep.FirstBad != 2 {
		t.Errorf("VerifyChain = %v, want first bad line 2", rep)
	}
}

// A checkout with CRLF line endings (git autocrlf) still verifies and can be
// appended to.
func TestLedgerCRLF(t *testing.T) {
	path := ledgerTestBuild(t, 3)
	b, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")), 0o644)
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 3 {
		t.Fatalf("VerifyChain(CRLF) = %v", rep)
	}
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(ledgerTestRecord(t, "INT-001", 3)); err != nil {
		t.Fatal(err)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 4 || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain(CRLF + LF) = %v %+v", rep, rep.Problems)
	}
}

// When the file is replaced under an open Ledger (git checkout, merge),
// appends follow the path.
func TestLedgerFollowsReplacedFile(t *testing.T) {
	path := ledgerTestBuild(t, 2)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b, _ := os.ReadFile(path)
	tmp := path + ".new"
	os.WriteFile(tmp, b, 0o644)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ledgerTestRecord(t, "INT-001", 2)); err != nil {
		t.Fatal(err)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 3 {
		t.Fatalf("VerifyChain = %v, want the append in the new file", rep)
	}
	os.Remove(path)
	if err := l.Append(ledgerTestRecord(t, "INT-001", 3)); err != nil {
		t.Fatal(err)
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 1 {
		t.Fatalf("VerifyChain = %v, want a new ledger of one line", rep)
	}
}

// Lines far longer than bufio.Scanner's 64 KiB limit, and longer than the
// tail reader's first chunks.
func TestLedgerLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerName)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := json.RawMessage(`{"error":"SCOPE_VIOLATION","message":"` + strings.Repeat("x", 3<<20) + `"}`)
	for i := range 4 {
		rec := ledgerTestRecord(t, "INT-001", i)
		if i%2 == 0 {
			rec.Meta.Denial = big
		}
		if err := l.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 4 || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
	n := 0
	err = ScanLedger(path, func(_ int, raw []byte, rec *Record, err error) error {
		if err != nil {
			return err
		}
		if n%2 == 0 && len(rec.Meta.Denial) != len(big) {
			return fmt.Errorf("record %d: denial of %d bytes, want %d", n, len(rec.Meta.Denial), len(big))
		}
		n++
		return nil
	})
	if err != nil || n != 4 {
		t.Fatalf("ScanLedger = %v after %d records", err, n)
	}
}

func TestLedgerConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerName)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := OpenLedger(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Close()
			for i := range 25 {
				if err := l.Append(ledgerTestRecord(t, "INT-001", g*100+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != 100 || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain = %v", rep)
	}
}

// TestLedgerHelperProcess is not a test: it is the child process of the
// multi-process tests.
func TestLedgerHelperProcess(t *testing.T) {
	mode := os.Getenv(ledgerTestChildEnv)
	if mode == "" {
		t.Skip("child process of the ledger tests")
	}
	l, err := OpenLedger(os.Getenv(ledgerTestPathEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	big := json.RawMessage(`{"error":"HOOK_ERROR","message":"` + strings.Repeat("y", 32<<10) + `"}`)
	for i := 0; mode == "loop" || i < 200; i++ {
		rec := ledgerTestRecord(t, "INT-"+strconv.Itoa(os.Getpid()), i)
		if mode == "loop" && i%8 == 0 {
			rec.Meta.Denial = big // a multi-page write, which SIGKILL can cut short
		}
		if mode == "vary" {
			// Lines of a few hundred bytes, over a tail chunk (8 KiB),
			// over the kept tail buffer (64 KiB).
			if n := []int{0, 9 << 10, 0, 70 << 10, 3 << 10}[(i+os.Getpid())%5]; n > 0 {
				rec.Meta.Denial = json.RawMessage(`{"error":"HOOK_ERROR","message":"` + strings.Repeat("v", n) + `"}`)
			}
		}
		if err := l.Append(rec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Stdout.WriteString("id:" + rec.ID + "\n")
	}
	l.Close()
	os.Exit(0)
}

func ledgerTestChild(t *testing.T, mode, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLedgerHelperProcess$")
	cmd.Env = append(os.Environ(), ledgerTestChildEnv+"="+mode, ledgerTestPathEnv+"="+path)
	cmd.Stderr = os.Stderr
	return cmd
}

// ledgerTestIDs reads the ids a child printed.
func ledgerTestIDs(out []byte) []string {
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// ledgerTestIDSet is the set of record ids in a ledger; every line must parse.
func ledgerTestIDSet(t *testing.T, path string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	err := ScanLedger(path, func(n int, _ []byte, rec *Record, err error) error {
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		ids[rec.ID] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestLedgerConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("1,600 fsyncs")
	}
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	const procs = 8
	outs := make([][]byte, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[p], errs[p] = ledgerTestChild(t, "append200", path).Output()
		}()
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			t.Fatalf("child %d: %v", p, err)
		}
	}
	rep := ledgerTestVerify(t, path)
	if !rep.OK() || rep.Lines != procs*200 || rep.Records != procs*200 || len(rep.Forks) != 0 || rep.TornTail != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
	have := ledgerTestIDSet(t, path)
	for p, out := range outs {
		ids := ledgerTestIDs(out)
		if len(ids) != 200 {
			t.Errorf("child %d printed %d ids, want 200", p, len(ids))
		}
		for _, id := range ids {
			if !have[id] {
				t.Errorf("record %s of child %d is missing", id, p)
			}
		}
	}
}

func FuzzReadLedgerLine(f *testing.F) {
	for _, in := range recordTestInputs() {
		rec, err := NewRecord(in)
		if err != nil {
			f.Fatal(err)
		}
		line, _ := MarshalShape(rec, ShapeAgentTrace)
		f.Add(line)
		seed, _ := MarshalShape(rec, ShapeSeed)
		f.Add(seed)
	}
	f.Add([]byte(`{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00.5+01:00","files":[],"metadata":{"x":[1, 2],"dev.intentgate":{"denial":null,"prev":""}}}`))
	f.Add([]byte(`{"id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[{"relative_path":"a","conversations":[{"contributor":{"entity_type":"Human"},"ranges":[],"related":[{"type":"specification","value":"a/b c"}]}]}]}`))
	f.Add([]byte("{\"version\":\"0.1.0\"}\r\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ReadLedgerLine(line)
		if err != nil {
			return
		}
		out, err := MarshalShape(rec, ShapeAgentTrace)
		if err != nil {
			t.Fatalf("a record that parses does not marshal: %v\n%q", err, line)
		}
		if bytes.IndexByte(out, '\n') >= 0 {
			t.Fatalf("marshaled record has a newline: %q", out)
		}
		back, err := ReadLedgerLine(out)
		if err != nil {
			t.Fatalf("re-marshaled record does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, rec) {
			t.Fatalf("round trip changed the record:\n%#v\n%#v\n%s", rec, back, out)
		}
		out2, err := MarshalShape(back, ShapeAgentTrace)
		if err != nil || !bytes.Equal(out2, out) {
			t.Fatalf("second marshal differs:\n%s\n%s", out, out2)
		}
		if _, err := MarshalShape(rec, ShapeSeed); err != nil {
			t.Fatalf("seed shape: %v", err)
		}
	})
}

func TestLedgerTail(t *testing.T) {
	long := strings.Repeat("x", 20000) // longer than the first chunks read
	tests := []struct {
		in       string
		last     string
		ok       bool
		complete int64
		torn     string
	}{
		{"", "", false, 0, ""},
		{"a", "", false, 0, "a"},
		{"\n", "", true, 1, ""},
		{"a\n", "a", true, 2, ""},
		{"a\r\n", "a", true, 3, ""},
		{"a\nb", "a", true, 2, "b"},
		{"a\nb\n", "b", true, 4, ""},
		{"a\n" + long + "\n", long, true, int64(len(long)) + 3, ""},
		{"a\n" + long + "\n" + long, long, true, int64(len(long)) + 3, long},
		{long + "\n" + long, long, true, int64(len(long)) + 1, long},
	}
	for _, tt := range tests {
		last, ok, complete, torn, err := ledgerTail(strings.NewReader(tt.in), int64(len(tt.in)))
		if err != nil || string(last) != tt.last || ok != tt.ok || complete != tt.complete || string(torn) != tt.torn {
			t.Errorf("ledgerTail(%.20q) = %.20q, %v, %d, %.20q, %v; want %.20q, %v, %d, %.20q",
				tt.in, last, ok, complete, torn, err, tt.last, tt.ok, tt.complete, tt.torn)
		}
	}
}

func TestAppendAllChains(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerName)
	l, err := OpenLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mk := func(i int) *Record {
		rec, err := NewRecord(RecordInput{Path: fmt.Sprintf("src/%d.go", i), Meta: Meta{Mutation: MutationCreate}})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if err := l.Append(mk(0)); err != nil {
		t.Fatal(err)
	}
	n, err := l.AppendAll([]*Record{mk(1), mk(2), mk(3)})
	if err != nil || n != 3 {
		t.Fatalf("AppendAll = %d, %v; want 3", n, err)
	}
	if err := l.Append(mk(4)); err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyChain(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Lines != 5 || len(rep.Forks) != 0 {
		t.Fatalf("VerifyChain after AppendAll = %v", rep)
	}
}

// firstSeen answers like a plain map even when every key folds alike.
func TestFirstSeenCollisions(t *testing.T) {
	for name, fold := range map[string]func([32]byte) uint64{
		"all collide": func([32]byte) uint64 { return 7 },
		"first byte":  func(h [32]byte) uint64 { return uint64(h[0] % 3) },
	} {
		f := newFirstSeen(fold)
		ref := map[[32]byte]int{}
		for line := 1; line <= 300; line++ {
			var k [32]byte
			k[0], k[31] = byte(line%17), byte(line%23) // repeats: some keys come back
			if _, ok := ref[k]; !ok {
				ref[k] = line
			}
			f.note(k, line)
			if f.keys[line-1] != k {
				t.Fatalf("%s: line %d's key not kept", name, line)
			}
		}
		for k, want := range ref {
			if got, ok := f.get(k); !ok || got != want {
				t.Fatalf("%s: get(%x) = %d, %v; want %d", name, k[:1], got, ok, want)
			}
		}
		var absent [32]byte
		absent[1] = 1
		if _, ok := f.get(absent); ok {
			t.Fatalf("%s: an absent key is found", name)
		}
	}
}

// The tail read into a kept buffer gives what a fresh read gives, whatever
// the buffer held before (longer or shorter lines, a torn tail) and for
// lines longer than the buffer kept.
func TestLedgerTailScratch(t *testing.T) {
	long := strings.Repeat("x", 20000)  // more than the first chunk
	huge := strings.Repeat("y", 100000) // more than the buffer kept
	ins := []string{
		"", "a", "\n", "a\n", "a\r\n", "a\nb", "a\nb\n",
		"a\n" + long + "\n", "a\n" + long + "\n" + long, long + "\n" + long,
		"b\n" + huge + "\n", huge + "\nc\n", "c\n" + huge, "d\ne\n",
	}
	var scratch []byte
	for round := range 2 {
		for i := range ins {
			in := ins[i]
			if round == 1 {
				in = ins[len(ins)-1-i]
			}
			r := strings.NewReader(in)
			want, wok, wcomplete, wtorn, werr := ledgerTailRaw(r, int64(len(in)))
			got, ok, complete, torn, err := ledgerTailRawIn(r, int64(len(in)), &scratch)
			if err != nil || werr != nil || string(got) != string(want) || ok != wok || complete != wcomplete || string(torn) != string(wtorn) {
				t.Fatalf("round %d: ledgerTailRawIn(%.20q) = %.20q, %v, %d, %.20q, %v; a fresh read gives %.20q, %v, %d, %.20q, %v",
					round, in, got, ok, complete, torn, err, want, wok, wcomplete, wtorn, werr)
			}
			if cap(scratch) > ledgerScratchMax {
				t.Fatalf("kept a buffer of %d bytes", cap(scratch))
			}
		}
	}
	// By hand: the last whole line of "a\n<long>\n<long>" is the first long
	// line, its newline included, ending at 2+20000+1.
	in := "a\n" + long + "\n" + long
	got, ok, complete, torn, err := ledgerTailRawIn(strings.NewReader(in), int64(len(in)), &scratch)
	if err != nil || !ok || string(got) != long+"\n" || complete != 20003 || string(torn) != long {
		t.Fatalf("ledgerTailRawIn = %.20q, %v, %d, %.20q, %v", got, ok, complete, torn, err)
	}
}

// Processes appending lines of very different lengths (a few hundred bytes,
// more than a tail chunk, more than the kept tail buffer) link each line to
// the one before it, whoever wrote that.
func TestLedgerConcurrentProcessesVaryingLines(t *testing.T) {
	if testing.Short() {
		t.Skip("800 fsyncs")
	}
	path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
	const procs = 4
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[p] = ledgerTestChild(t, "vary", path).Output()
		}()
	}
	wg.Wait()
	for p, err := range errs {
		if err != nil {
			t.Fatalf("child %d: %v", p, err)
		}
	}
	rep := ledgerTestVerify(t, path)
	if !rep.OK() || rep.Lines != procs*200 || rep.Records != procs*200 || len(rep.Forks) != 0 || rep.TornTail != 0 {
		t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
	}
	sizes := map[int]bool{}
	for _, line := range ledgerTestLines(t, path) {
		switch n := len(line); {
		case n > ledgerScratchMax:
			sizes[2] = true
		case n > 8<<10:
			sizes[1] = true
		default:
			sizes[0] = true
		}
	}
	if len(sizes) != 3 {
		t.Fatalf("line lengths seen %v, want short, over a chunk and over the kept buffer", sizes)
	}
}

// A line marshalled before the lock with a stand-in link, the link written
// over it under the lock, is byte for byte the line marshalled with the
// link, in both shapes, whatever the record holds: paths, a denial and
// other writers' metadata that hold "prev" keys and links, and a stand-in
// that cannot be guessed. The first line (no link) is marshalled under the
// lock.
func TestLedgerPremarshalledLines(t *testing.T) {
	hostile := []func(*Record){
		func(*Record) {},
		func(r *Record) { r.Files[0].Path = `src/"prev":"sha256:` + strings.Repeat("0", 64) + `".go` },
		func(r *Record) {
			r.Meta.Denial = json.RawMessage(`{"prev":"sha256:` + strings.Repeat("a", 64) + `","x":"\"prev\":\""}`)
		},
		func(r *Record) {
			r.OtherMetadata = map[string]json.RawMessage{"zz.other": json.RawMessage(`{"prev":"sha256:` + strings.Repeat("b", 64) + `"}`)}
		},
		func(r *Record) { r.Meta.Session = "prev\n\"prev\":\"sha256:\u2028" },
	}
	for _, shape := range []RecordShape{ShapeAgentTrace, ShapeSeed} {
		path := filepath.Join(t.TempDir(), ".orchestration", LedgerName)
		l, err := OpenLedger(path)
		if err != nil {
			t.Fatal(err)
		}
		l.Shape = shape
		var want [][]byte
		for i := range 3 * len(hostile) {
			rec := ledgerTestRecord(t, "INT-001", i)
			hostile[i%len(hostile)](rec)
			line, err := l.AppendLine(rec)
			if err != nil {
				t.Fatal(err)
			}
			// What marshalling the record with its link gives.
			again, err := MarshalShape(rec, shape)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(line, again) {
				t.Fatalf("shape %v, record %d: the line written\n%s\nis not the record marshalled with its link\n%s", shape, i, line, again)
			}
			if i == 0 && rec.Meta.Prev != "" || i > 0 && len(rec.Meta.Prev) != ledgerLinkLen {
				t.Fatalf("record %d: prev %q", i, rec.Meta.Prev)
			}
			want = append(want, append(again, '\n'))
		}
		l.Close()
		got := ledgerTestLines(t, path)
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("line %d is\n%s\nwant\n%s", i+1, got[i], want[i])
			}
		}
		if rep := ledgerTestVerify(t, path); !rep.OK() || rep.Lines != len(want) {
			t.Fatalf("VerifyChain = %v %+v", rep, rep.Problems)
		}
	}
	// The stand-in is fresh for each line, and found in both shapes.
	for _, shape := range []RecordShape{ShapeAgentTrace, ShapeSeed} {
		rec := ledgerTestRecord(t, "INT-001", 1)
		a, at := ledgerPremarshal(rec, shape)
		b, bt := ledgerPremarshal(rec, shape)
		if at == 0 || at != bt || bytes.Equal(a, b) || rec.Meta.Prev != "" {
			t.Fatalf("shape %v: premarshal at %d and %d, same line %v, prev %q", shape, at, bt, bytes.Equal(a, b), rec.Meta.Prev)
		}
	}
}

// ledgerLines takes its reader from a pool: goroutines reading different
// files at once, lines longer than the reader's buffer and torn tails
// among them, each see exactly their own file's lines.
func TestLedgerLinesReusedReaders(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a": "one\r\ntwo\n" + strings.Repeat("L", 70<<10) + "\nthree",
		"b": strings.Repeat("short line\n", 500) + strings.Repeat("M", 140<<10) + "\n",
		"c": "",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What each file holds, split by hand: lines without "\n" or "\r\n",
	// and whether each ended with a newline.
	type line struct {
		text     string
		size     int
		complete bool
	}
	want := map[string][]line{}
	for name, body := range files {
		for rest := body; rest != ""; {
			i := strings.IndexByte(rest, '\n')
			if i < 0 {
				want[name] = append(want[name], line{rest, len(rest), false})
				break
			}
			want[name] = append(want[name], line{strings.TrimSuffix(rest[:i], "\r"), i + 1, true})
			rest = rest[i+1:]
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for g := range 24 {
		name := []string{"a", "b", "c"}[g%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				f, err := os.Open(filepath.Join(dir, name))
				if err != nil {
					errs <- err
					return
				}
				var got []line
				err = ledgerLines(f, func(raw []byte, size int, complete bool) error {
					got = append(got, line{string(raw), size, complete})
					return nil
				})
				f.Close()
				if err != nil {
					errs <- err
					return
				}
				if len(got) != len(want[name]) {
					errs <- fmt.Errorf("file %s: %d lines, want %d", name, len(got), len(want[name]))
					return
				}
				for i := range got {
					if got[i] != want[name][i] {
						errs <- fmt.Errorf("file %s line %d: %.20q %d %v, want %.20q %d %v", name, i+1,
							got[i].text, got[i].size, got[i].complete, want[name][i].text, want[name][i].size, want[name][i].complete)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
