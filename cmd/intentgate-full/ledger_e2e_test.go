package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ledgerLine is the part of a record the end-to-end tests check, decoded
// independently of the orchestration package.
type ledgerLine struct {
	Files []struct {
		Path          string `json:"path"`
		Conversations []struct {
			Ranges []struct {
				Start int    `json:"start_line"`
				End   int    `json:"end_line"`
				Hash  string `json:"content_hash"`
			} `json:"ranges"`
		} `json:"conversations"`
	} `json:"files"`
	Metadata struct {
		IG struct {
			Intent    string          `json:"intent"`
			Session   string          `json:"session"`
			CallID    string          `json:"call_id"`
			Tool      string          `json:"tool"`
			Agent     string          `json:"agent"`
			Mutation  string          `json:"mutation"`
			Decision  string          `json:"decision"`
			Before    string          `json:"before_sha256"`
			After     string          `json:"after_sha256"`
			Denial    json.RawMessage `json:"denial"`
			Ambiguous string          `json:"ambiguous"`
			Prev      string          `json:"prev"`
		} `json:"dev.intentgate"`
	} `json:"metadata"`
}

// rangeHash is DESIGN.md's rule, written out again on purpose: the lines of
// the range, CRLF normalized to LF, each terminated by "\n", SHA-256, hex.
func rangeHash(content []byte, start, end int) string {
	s := strings.ReplaceAll(string(content), "\r\n", "\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	var b strings.Builder
	for i := start; i <= end; i++ {
		b.WriteString(lines[i-1])
		b.WriteString("\n")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agent-trace-0.1.0.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("agent-trace.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("agent-trace.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A session of writes, edits and commands through the real binary leaves a
// ledger whose every record validates as Agent Trace 0.1.0, whose chain links
// each line to the one before, and whose latest ranges per file can be
// recomputed from the file on disk.
func TestLedgerRecordsAreRecomputable(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, e2eIntents, map[string]string{
		"src/crlf.txt": "one\r\ntwo\r\nthree\r\n",
		"src/keep.go":  "package keep\n\nfunc A() {}\n\nfunc B() {}\n",
	})
	calls := []string{
		`{"tool":"select_active_intent","args":{"intent_id":"INT-001"}}`,
		`{"tool":"write_to_file","args":{"path":"src/new.go","content":"package src\n\nvar x = 1"}}`,
		`{"tool":"read_file","args":{"path":"src/keep.go"}}`,
		`{"tool":"write_to_file","args":{"path":"src/keep.go","content":"package keep\n\nfunc A() { println() }\n\nfunc B() {}\n\nfunc C() {}\n"}}`,
		`{"tool":"read_file","args":{"path":"src/crlf.txt"}}`,
		`{"tool":"write_to_file","args":{"path":"src/crlf.txt","content":"one\r\nTWO\r\nthree\r\nfour\r\n"}}`,
		`{"tool":"execute_command","args":{"command":"printf 'a\\nb\\n' > src/cmd.txt && ln -s /etc src/etc-link"}}`,
		`{"tool":"write_to_file","args":{"path":"docs/x.md","content":"no"}}`,
		`{"tool":"read_file","args":{"path":"src/new.go"}}`,
		`{"tool":"write_to_file","args":{"path":"src/new.go","content":""}}`,
	}
	var in strings.Builder
	for i, c := range calls {
		fmt.Fprintf(&in, `{"id":"%d","session":"ledger","agent":{"name":"t","model":"test/model"},%s`+"\n", i, c[1:])
	}
	cmd := exec.Command(e2eBinary(t), "dispatch", "-w", ws)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dispatch: %v\n%s", err, out)
	}

	f, err := os.Open(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sch := schema(t)
	latest := map[string]ledgerLine{}
	decisions := map[string]int{}
	prevLine := []byte(nil)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := append([]byte(nil), sc.Bytes()...)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("line %d does not validate as Agent Trace 0.1.0: %v", n, err)
		}
		var rec ledgerLine
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		wantPrev := ""
		if prevLine != nil {
			sum := sha256.Sum256(prevLine)
			wantPrev = "sha256:" + hex.EncodeToString(sum[:])
		}
		if rec.Metadata.IG.Prev != wantPrev {
			t.Errorf("line %d: prev = %q, want %q", n, rec.Metadata.IG.Prev, wantPrev)
		}
		prevLine = raw
		decisions[rec.Metadata.IG.Decision+"/"+rec.Metadata.IG.Mutation]++
		if rec.Metadata.IG.Decision == "allow" && len(rec.Files) == 1 {
			latest[rec.Files[0].Path] = rec
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Checked by hand against the calls above.
	for k, want := range map[string]int{
		"allow/create": 2, "allow/modify": 3, "violation/violation": 1, "deny/denial": 1,
	} {
		if decisions[k] != want {
			t.Errorf("%d records %s, want %d (all: %v)", decisions[k], k, want, decisions)
		}
	}
	wantRanges := map[string][][2]int{
		"src/new.go":   nil,              // emptied: nothing inserted
		"src/keep.go":  {{3, 3}, {6, 7}}, // A changed; a blank line and C added
		"src/crlf.txt": {{2, 2}, {4, 4}},
		"src/cmd.txt":  {{1, 2}},
	}
	for path, want := range wantRanges {
		rec, ok := latest[path]
		if !ok {
			t.Errorf("no allowed record for %s", path)
			continue
		}
		content, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(content)
		if got := rec.Metadata.IG.After; got != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: after_sha256 = %s, want the file's hash", path, got)
		}
		var got [][2]int
		for _, r := range rec.Files[0].Conversations[0].Ranges {
			got = append(got, [2]int{r.Start, r.End})
			if h := rangeHash(content, r.Start, r.End); r.Hash != h {
				t.Errorf("%s lines %d-%d: content_hash %s, recomputed %s", path, r.Start, r.End, r.Hash, h)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: ranges %v, want %v", path, got, want)
		}
	}
}
