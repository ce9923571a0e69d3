package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/internal/dispatch"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
)

// resultLine is one answer of the dispatch front door, as its tests read it.
type resultLine = dispatch.Result

// The dispatch command, constructed and run in the test process: --agent
// and --model fill in calls that name none, every line gets one answer in
// order, and a workspace with no .orchestration/ is refused naming init.
func TestDispatchCommandFlagsAndOutput(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".orchestration", "active_intents.yaml"), []byte(e2eIntents), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	root := newRoot(strings.NewReader(`{"id":"1","session":"s","tool":"read_file","args":{"path":"README.md"}}
not json
{"id":"3","session":"s","tool":"write_to_file","args":{"path":"src/a.go","content":"x"}}
`), &out, &errw)
	root.SetArgs([]string{"dispatch", "--workspace", filepath.Join(ws, "README.md", ".."), "--agent", "flag-agent", "--model", "flag/model"})
	if err := root.Execute(); err != nil {
		t.Fatalf("dispatch: %v\n%s", err, errw.String())
	}
	var got []resultLine
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r resultLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("answer %q: %v", l, err)
		}
		got = append(got, r)
	}
	if len(got) != 3 {
		t.Fatalf("%d answers, want 3:\n%s", len(got), out.String())
	}
	if !got[0].OK || !strings.Contains(got[0].Output, "hello") {
		t.Errorf("read_file: %+v, want the file's content", got[0])
	}
	if got[1].OK || got[1].ID != "" || !strings.Contains(got[1].Error, "line 2: not a call") {
		t.Errorf("line 2: %+v, want an error naming the line", got[1])
	}
	if got[2].OK || got[2].Denial == nil || got[2].Denial.Code != "NO_ACTIVE_INTENT" {
		t.Errorf("write without an intent: %+v, want NO_ACTIVE_INTENT", got[2])
	}
	b, err := os.ReadFile(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"flag-agent"`) || !strings.Contains(string(b), `"flag/model"`) {
		t.Errorf("the ledger does not name --agent and --model:\n%s", b)
	}

	none := t.TempDir()
	root = newRoot(strings.NewReader(""), &out, &errw)
	root.SetArgs([]string{"dispatch", "-w", none})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "intentgate init") {
		t.Errorf("dispatch where no workspace is: %v, want a refusal naming intentgate init", err)
	}
	if _, err := os.Stat(filepath.Join(none, ".orchestration")); err == nil {
		t.Error("dispatch created .orchestration/ where there was none")
	}
}

// dispatch leaves a blame snapshot of every version it wrote: its line
// fingerprints, under the SHA-256 of its content.
func TestDispatchLeavesEverySnapshotOnExit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".orchestration", "active_intents.yaml"), []byte(e2eIntents), 0o644); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	in.WriteString(`{"id":"0","session":"s","tool":"select_active_intent","args":{"intent_id":"INT-001"}}` + "\n")
	var contents []string
	for i := range 40 {
		c := "package a\n// version " + strings.Repeat("v", i) + "\n"
		contents = append(contents, c)
		arg, _ := json.Marshal(map[string]string{"path": "src/a.go", "content": c})
		in.WriteString(`{"id":"w` + strings.Repeat("1", i+1) + `","session":"s","tool":"write_to_file","args":` + string(arg) + "}\n")
	}
	var out, errw bytes.Buffer
	root := newRoot(strings.NewReader(in.String()), &out, &errw)
	root.SetArgs([]string{"dispatch", "--workspace", ws})
	if err := root.Execute(); err != nil {
		t.Fatalf("dispatch: %v\n%s", err, errw.String())
	}
	if n := strings.Count(out.String(), `"ok":true`); n != 41 {
		t.Fatalf("%d calls answered ok, want 41:\n%s", n, out.String())
	}
	index := filepath.Join(ws, ".orchestration", "index")
	for i, c := range contents {
		sum := sha256.Sum256([]byte(c))
		sha := hex.EncodeToString(sum[:])
		fps, ok := snap.Read(index, sha)
		if !ok {
			t.Fatalf("version %d: no snapshot", i)
		}
		// A fingerprint per line: the first 8 bytes of the SHA-256 of the
		// line and "\n".
		var want []uint64
		for _, l := range strings.SplitAfter(strings.TrimSuffix(c, "\n"), "\n") {
			s := sha256.Sum256([]byte(strings.TrimSuffix(l, "\n") + "\n"))
			want = append(want, binary.BigEndian.Uint64(s[:8]))
		}
		if !slices.Equal(fps, want) {
			t.Fatalf("version %d: snapshot %x, want %x", i, fps, want)
		}
	}
	// All in one pack: no file per version.
	entries, err := os.ReadDir(filepath.Join(index, "snap"))
	if err != nil || len(entries) != 1 || entries[0].Name() != "pack" {
		t.Errorf("snap/ holds %v (%v), want only the pack", entries, err)
	}
}
