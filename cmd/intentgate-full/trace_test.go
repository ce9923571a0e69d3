package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intentgate/intentgate/orchestration"
)

// traceDispatch runs calls through `intentgate dispatch` as one session of
// one model, and fails the test if any is not ok (unless it is expected to
// be refused: calls whose tool name starts with "!").
func traceDispatch(t *testing.T, ws, session, model string, calls ...string) {
	t.Helper()
	var in strings.Builder
	var refused []bool
	for i, c := range calls {
		deny := strings.HasPrefix(c, "!")
		c = strings.TrimPrefix(c, "!")
		refused = append(refused, deny)
		fmt.Fprintf(&in, `{"id":"%d","session":%q,"agent":{"name":"test-agent","model":%q},%s`+"\n", i, session, model, c[1:])
	}
	cmd := exec.Command(e2eBinary(t), "dispatch", "-w", ws)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dispatch: %v\n%s", err, out)
	}
	for i, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("result %q: %v", l, err)
		}
		if r.OK == refused[i] {
			t.Fatalf("call %d (%s): %+v, denial %+v", i, calls[i], r, r.Denial)
		}
	}
}

func writeCall(path, content string) string {
	b, _ := json.Marshal(map[string]any{"tool": "write_to_file", "args": map[string]any{"path": path, "content": content}})
	return string(b)
}

func readCall(path string) string {
	b, _ := json.Marshal(map[string]any{"tool": "read_file", "args": map[string]any{"path": path}})
	return string(b)
}

const selectCall = `{"tool":"select_active_intent","args":{"intent_id":"INT-001"}}`

// runIG runs the binary and returns stdout and the exit status.
func runIG(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if code > 1 {
		t.Fatalf("intentgate %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr.String())
	}
	return string(out), code
}

func fnBlock(name string) string {
	return fmt.Sprintf("func %s() int {\n\tv := compute%s()\n\treturn v + len(%q)\n}\n", name, name, name)
}

type blameJSON struct {
	Path  string `json:"path"`
	Lines []struct {
		Line   int    `json:"line"`
		Text   string `json:"text"`
		Reason string `json:"unattributed"`
		Record *struct {
			Record   string `json:"record"`
			Intent   string `json:"intent"`
			Session  string `json:"session"`
			Model    string `json:"model"`
			Tool     string `json:"tool"`
			Evidence string `json:"evidence"`
		} `json:"record"`
	} `json:"lines"`
}

func traceBlame(t *testing.T, ws, path string) blameJSON {
	t.Helper()
	out, code := runIG(t, "trace", "blame", "-w", ws, "--json", path)
	if code != 0 {
		t.Fatalf("trace blame: exit %d\n%s", code, out)
	}
	var b blameJSON
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("blame --json: %v\n%s", err, out)
	}
	return b
}

// Real edit histories through dispatch: a later edit moves lines (they keep
// their writer), a person edits a line by hand (it is unattributed), and the
// lines around it keep theirs.
func TestTraceBlameThroughDispatch(t *testing.T) {
	t.Parallel()
	a, b, c, d := fnBlock("alpha"), fnBlock("beta"), fnBlock("gamma"), fnBlock("delta")
	ws := e2eWorkspace(t, e2eIntents, nil)
	traceDispatch(t, ws, "s1", "vendor/model-one", selectCall, writeCall("src/app.go", "package app\n\n"+a+b+c))
	traceDispatch(t, ws, "s2", "vendor/model-two", selectCall, readCall("src/app.go"),
		writeCall("src/app.go", "package app\n\n"+c+a+b+d)) // gamma moves to the top, delta is new

	check := func(bl blameJSON, want map[string]string) {
		t.Helper()
		for _, l := range bl.Lines {
			w, ok := want[l.Text]
			if !ok {
				continue
			}
			got := ""
			if l.Record != nil {
				got = l.Record.Session
			}
			if got != w {
				t.Errorf("line %d %q: session %q (%+v %s), want %q", l.Line, l.Text, got, l.Record, l.Reason, w)
			}
		}
	}
	moved := map[string]string{
		"package app": "s1", "func gamma() int {": "s1", "\tv := computegamma()": "s1", "func alpha() int {": "s1",
		"\tv := computealpha()": "s1", "\tv := computebeta()": "s1", "func delta() int {": "s2", "\tv := computedelta()": "s2",
	}
	bl := traceBlame(t, ws, "src/app.go")
	check(bl, moved)
	for _, l := range bl.Lines {
		if l.Record != nil && l.Record.Session == "s1" && (l.Record.Model != "vendor/model-one" || l.Record.Intent != "INT-001" || l.Record.Tool != "write_to_file") {
			t.Errorf("line %d: %+v, want model-one, INT-001, write_to_file", l.Line, l.Record)
		}
	}

	// A person edits one line of alpha by hand.
	p := filepath.Join(ws, "src", "app.go")
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Replace(body, []byte("computealpha()"), []byte("computeAlpha() /* by hand */"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	bl = traceBlame(t, ws, "src/app.go")
	delete(moved, "\tv := computealpha()")
	moved["\tv := computeAlpha() /* by hand */"] = ""
	check(bl, moved)

	// The text form names sessions and marks the hand-edited line.
	out, _ := runIG(t, "trace", "blame", "-w", ws, "-L", "3,6", "src/app.go")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 || !strings.Contains(lines[0], "s1") || !strings.Contains(lines[0], "3) func gamma") {
		t.Errorf("blame -L 3,6:\n%s", out)
	}
	out, _ = runIG(t, "trace", "blame", "-w", ws, "src/app.go")
	if !strings.Contains(out, "changed after the record") || !strings.Contains(out, "by hand") {
		t.Errorf("blame does not mark the hand edit:\n%s", out)
	}
}

// verify, seal, log, show, stats, export and import through the binary.
func TestTraceCommands(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, nil)
	traceDispatch(t, ws, "s1", "vendor/model-one", selectCall,
		writeCall("src/a.go", "package a\n\nvar A = 1\n"),
		"!"+writeCall("docs/x.md", "outside the scope\n"),
		readCall("src/a.go"), writeCall("src/a.go", "package a\n\nvar A = 2\nvar B = 3\n"))
	traceDispatch(t, ws, "s2", "vendor/model-two", "!"+writeCall("src/b.go", "no intent yet\n"), selectCall, writeCall("src/b.go", "package a\n"))

	out, code := runIG(t, "trace", "verify", "-w", ws)
	if code != 0 || !strings.Contains(out, "INTACT") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	if out, code = runIG(t, "trace", "seal", "-w", ws); code != 0 || !strings.Contains(out, "refs/intentgate/checkpoints") {
		t.Fatalf("seal: exit %d\n%s", code, out)
	}

	out, _ = runIG(t, "trace", "log", "-w", ws, "--intent", "INT-001")
	if n := strings.Count(out, "\n"); n != 4 {
		t.Errorf("log --intent INT-001: %d records, want 4 (3 changes, 1 refusal)\n%s", n, out)
	}
	out, _ = runIG(t, "trace", "log", "-w", ws, "--denials")
	if strings.Count(out, "DENIED") != 2 || !strings.Contains(out, "NO_ACTIVE_INTENT") {
		t.Errorf("log --denials:\n%s", out)
	}
	out, _ = runIG(t, "trace", "log", "-w", ws, "--file", "src/a.go", "--session", "s1", "--json")
	var entries []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("log --json: %v: %q", err, l)
		}
		entries = append(entries, e)
	}
	if len(entries) != 2 {
		t.Fatalf("log --file src/a.go --session s1: %d entries, want 2\n%s", len(entries), out)
	}
	if out, _ = runIG(t, "trace", "log", "-w", ws, "--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); out != "" {
		t.Errorf("log --since the future: %q", out)
	}
	id := entries[1]["id"].(string)
	out, code = runIG(t, "trace", "show", "-w", ws, id[len(id)-12:])
	if code != 0 || !strings.Contains(out, "record "+id) || !strings.Contains(out, "prev: previous line") {
		t.Errorf("show %s: exit %d\n%s", id[len(id)-12:], code, out)
	}

	out, _ = runIG(t, "trace", "stats", "-w", ws, "--json")
	var st struct {
		Records  int `json:"records"`
		ByIntent []struct {
			Key         string         `json:"key"`
			LinesAdded  int            `json:"lines_added"`
			Files       int            `json:"files_touched"`
			DenialCodes map[string]int `json:"denials_by_code"`
		} `json:"by_intent"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	if st.Records != 5 {
		t.Errorf("stats: %d records, want 5", st.Records)
	}
	for _, r := range st.ByIntent {
		if r.Key == "INT-001" && (r.Files != 2 || r.LinesAdded != 6 || r.DenialCodes["SCOPE_VIOLATION"] != 1) {
			t.Errorf("stats INT-001 = %+v, want 2 files, 6 lines, 1 SCOPE_VIOLATION", r)
		}
	}

	// Export in the seed shape, import into a fresh workspace: the chain
	// holds there, and importing again appends nothing.
	exp := filepath.Join(t.TempDir(), "trp1.jsonl")
	if _, code = runIG(t, "trace", "export", "-w", ws, "--format", "trp1", "-o", exp); code != 0 {
		t.Fatal("export failed")
	}
	b, _ := os.ReadFile(exp)
	if !bytes.Contains(b, []byte(`"relative_path":"src/a.go"`)) || !bytes.Contains(b, []byte(`{"type":"specification","value":"INT-001"}`)) {
		t.Errorf("trp1 export lacks the seed shape:\n%s", b)
	}
	ws2 := e2eWorkspace(t, e2eIntents, nil)
	if out, code = runIG(t, "trace", "import", "-w", ws2, exp); code != 0 || !strings.Contains(out, "appended 5") {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	if out, code = runIG(t, "trace", "import", "-w", ws2, exp); code != 0 || !strings.Contains(out, "appended 0, skipped 5 duplicates") {
		t.Errorf("second import: exit %d\n%s", code, out)
	}
	if out, code = runIG(t, "trace", "verify", "-w", ws2, "--no-drift"); code != 0 {
		t.Errorf("verify after import: exit %d\n%s", code, out)
	}
	if md, err := os.ReadFile(filepath.Join(ws2, ".orchestration", "intent_map.md")); err != nil || !bytes.Contains(md, []byte("src/a.go")) {
		t.Errorf("intent map after import: %v\n%s", err, md)
	}

	// Tampering with a sealed record: exit 1, the line and the kind named.
	ledger := filepath.Join(ws, ".orchestration", "agent_trace.jsonl")
	orig, _ := os.ReadFile(ledger)
	lines := bytes.SplitAfter(orig, []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"session":"s1"`), []byte(`"session":"sX"`), 1)
	if err := os.WriteFile(ledger, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runIG(t, "trace", "verify", "-w", ws, "--json")
	var rep struct {
		Intact   bool `json:"intact"`
		FirstBad struct {
			Line int    `json:"line"`
			Kind string `json:"kind"`
		} `json:"first_bad"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, out)
	}
	if code != 1 || rep.Intact || rep.FirstBad.Line != 3 || rep.FirstBad.Kind != "edit" {
		t.Errorf("verify of an edited ledger: exit %d, %+v; want exit 1, line 3, edit", code, rep)
	}
	if _, code = runIG(t, "trace", "seal", "-w", ws); code != 1 {
		t.Errorf("seal of a tampered ledger: exit %d, want 1", code)
	}
}

func TestInitIgnoresIndex(t *testing.T) {
	t.Parallel()
	found := false
	for _, l := range orchestration.GitignoreLines() {
		found = found || l == ".orchestration/index/"
	}
	if !found {
		t.Errorf("GitignoreLines() = %q, want .orchestration/index/ among them", orchestration.GitignoreLines())
	}
}

func TestTraceFlagParsers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{"", time.Time{}, false},
		{"2026-03-01T09:00:00Z", time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), false},
		{"2026-03-01", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), false},
		{"36h", now.Add(-36 * time.Hour), false},
		{"-1h", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	} {
		got, err := traceParseSince(tc.in, now)
		if (err != nil) != tc.bad || !got.Equal(tc.want) {
			t.Errorf("traceParseSince(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
	for _, tc := range []struct {
		in       string
		from, to int
		bad      bool
	}{{"", 0, 0, false}, {"3,6", 3, 6, false}, {"4", 4, 4, false}, {" 2 , 9 ", 2, 9, false}, {"0,3", 0, 0, true}, {"5,2", 0, 0, true}, {"a,b", 0, 0, true}} {
		from, to, err := traceParseLineRange(tc.in)
		if (err != nil) != tc.bad || from != tc.from || to != tc.to {
			t.Errorf("traceParseLineRange(%q) = %d, %d, %v; want %d, %d (error %v)", tc.in, from, to, err, tc.from, tc.to, tc.bad)
		}
	}
}

func TestTraceVerifyProgressAndBadImport(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, nil)
	traceDispatch(t, ws, "s1", "m/one", selectCall, writeCall("src/a.go", "package a\n"))
	cmd := exec.Command(e2eBinary(t), "trace", "verify", "-w", ws, "--progress")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("verify --progress: %v\n%s", err, out)
	}
	if !strings.Contains(stderr.String(), "verify [") || !strings.Contains(stderr.String(), "100%") {
		t.Errorf("verify --progress drew no bar on stderr: %q", stderr.String())
	}
	// An import with one bad record appends nothing.
	ledger := filepath.Join(ws, ".orchestration", "agent_trace.jsonl")
	before, _ := os.ReadFile(ledger)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	good, _ := runIG(t, "trace", "export", "-w", ws)
	os.WriteFile(bad, []byte(strings.Replace(good, `"type":"ai"`, `"type":"robot"`, 1)+`{"id":"x"}`+"\n"), 0o644)
	cmd = exec.Command(e2eBinary(t), "trace", "import", "-w", ws, bad)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "input line 1") {
		t.Errorf("import of a bad file: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(ledger); !bytes.Equal(before, after) {
		t.Error("a failed import changed the ledger")
	}
}

// TestTraceStatsKeptCount: trace stats keeps its count beside the index
// and says the same as a count from scratch after appends, with the kept
// count removed, and with it damaged.
func TestTraceStatsKeptCount(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, nil)
	traceDispatch(t, ws, "s1", "vendor/model-one", selectCall,
		writeCall("src/a.go", "package a\n\nvar A = 1\n"),
		"!"+writeCall("docs/x.md", "outside the scope\n"))
	type row struct {
		Key        string `json:"key"`
		Records    int    `json:"records"`
		LinesAdded int    `json:"lines_added"`
		Files      int    `json:"files_touched"`
		Denials    int    `json:"denials"`
	}
	stats := func() (string, int, row) {
		t.Helper()
		out, code := runIG(t, "trace", "stats", "-w", ws, "--json")
		var st struct {
			Records  int   `json:"records"`
			ByIntent []row `json:"by_intent"`
		}
		if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
			t.Fatalf("stats --json: exit %d, %v\n%s", code, err, out)
		}
		for _, r := range st.ByIntent {
			if r.Key == "INT-001" {
				return out, st.Records, r
			}
		}
		t.Fatalf("stats: no row for INT-001\n%s", out)
		return "", 0, row{}
	}
	first, n, r := stats()
	if n != 2 || r != (row{Key: "INT-001", Records: 2, LinesAdded: 3, Files: 1, Denials: 1}) {
		t.Fatalf("stats: %d records, INT-001 %+v; want 2, 2 records, 3 lines, 1 file, 1 denial", n, r)
	}
	kept := filepath.Join(ws, ".orchestration", "index", "stats.bin")
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("no count kept: %v", err)
	}
	if again, _, _ := stats(); again != first {
		t.Fatalf("stats from the kept count differs:\n%s\nwant\n%s", again, first)
	}
	traceDispatch(t, ws, "s1", "vendor/model-one", writeCall("src/b.go", "package a\n"))
	extended, n, r := stats()
	if n != 3 || r != (row{Key: "INT-001", Records: 3, LinesAdded: 4, Files: 2, Denials: 1}) {
		t.Fatalf("stats after an append: %d records, INT-001 %+v; want 3, 3 records, 4 lines, 2 files, 1 denial", n, r)
	}
	if err := os.Remove(kept); err != nil {
		t.Fatal(err)
	}
	if full, _, _ := stats(); full != extended {
		t.Fatalf("full count differs from the extended one:\n%s\nwant\n%s", full, extended)
	}
	b, err := os.ReadFile(kept)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(kept, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if damaged, _, _ := stats(); damaged != extended {
		t.Fatalf("stats with a damaged kept count differs:\n%s\nwant\n%s", damaged, extended)
	}
}
