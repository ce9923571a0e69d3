package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// applyDiffBlock is one SEARCH/REPLACE block; hint 0 leaves out :start_line:.
func applyDiffBlock(hint int, search, replace string) string {
	h := ""
	if hint != 0 {
		h = fmt.Sprintf(":start_line:%d\n-------\n", hint)
	}
	return "<<<<<<< SEARCH\n" + h + search + "\n=======\n" + replace + "\n>>>>>>> REPLACE"
}

// applyDiffRecord is the part of a ledger line this test reads.
type applyDiffRecord struct {
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
			CallID   string `json:"call_id"`
			Tool     string `json:"tool"`
			Decision string `json:"decision"`
			After    string `json:"after_sha256"`
		} `json:"dev.intentgate"`
	} `json:"metadata"`
}

// applyDiffRangeHash is DESIGN.md's range hash, computed here on its own:
// the lines, CRLF made LF, each ending in "\n", SHA-256, hex.
func applyDiffRangeHash(content string, start, end int) string {
	lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(content, "\r\n", "\n"), "\n"), "\n")
	var b strings.Builder
	for i := start; i <= end; i++ {
		b.WriteString(lines[i-1] + "\n")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// apply_diff through `intentgate dispatch`: each call changes the file as
// Roo Code's strategy would, and the ledger record of each successful call
// covers exactly the lines that call inserted or changed.
func TestApplyDiffThroughDispatch(t *testing.T) {
	t.Parallel()
	app := "package app\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n"
	ws := e2eWorkspace(t, e2eIntents, map[string]string{
		"src/app.go":  app,
		"src/win.txt": "one\r\ntwo\r\nthree\r\n",
	})
	s := startDispatch(t, ws, "applydiff")
	if r := s.call("select_active_intent", map[string]any{"intent_id": "INT-001"}); !r.OK {
		t.Fatalf("select: %+v", r)
	}
	for _, p := range []string{"src/app.go", "src/win.txt"} {
		if r := s.call("read_file", map[string]any{"path": p}); !r.OK {
			t.Fatalf("read %s: %+v", p, r)
		}
	}

	steps := []struct {
		name   string
		path   string
		diff   string
		ok     bool
		code   string // the denial, if any
		says   string // in the output or the error
		file   string // the content afterwards
		ranges [][2]int
	}{
		{
			// Given out of order; the block at line 4 goes first.
			name: "two blocks",
			path: "src/app.go",
			diff: applyDiffBlock(8, "\treturn 2", "\tx := 2\n\treturn x") + "\n" + applyDiffBlock(4, "\treturn 1", "\treturn 10"),
			ok:   true, says: "all 2 SEARCH/REPLACE blocks applied",
			file:   "package app\n\nfunc A() int {\n\treturn 10\n}\n\nfunc B() int {\n\tx := 2\n\treturn x\n}\n",
			ranges: [][2]int{{4, 4}, {8, 9}},
		},
		{
			name: "partial success",
			path: "src/app.go",
			diff: applyDiffBlock(0, "\treturn 10", "\treturn 11") + "\n" + applyDiffBlock(0, "func C() {}", "func D() {}"),
			ok:   true, says: "only 1 of 2",
			file:   "package app\n\nfunc A() int {\n\treturn 11\n}\n\nfunc B() int {\n\tx := 2\n\treturn x\n}\n",
			ranges: [][2]int{{4, 4}},
		},
		{
			name: "no block applies",
			path: "src/app.go",
			diff: applyDiffBlock(0, "func Missing() {}", "func Found() {}"),
			says: "changed nothing",
			file: "package app\n\nfunc A() int {\n\treturn 11\n}\n\nfunc B() int {\n\tx := 2\n\treturn x\n}\n",
		},
		{
			name: "malformed diff",
			path: "src/app.go",
			diff: "<<<<<<< SEARCH\nfunc A() int {\n>>>>>>> REPLACE",
			code: "INVALID_ARGUMENT",
			file: "package app\n\nfunc A() int {\n\treturn 11\n}\n\nfunc B() int {\n\tx := 2\n\treturn x\n}\n",
		},
		{
			// The SEARCH text ends in an empty line, so the blank line after
			// A goes too; nothing is inserted, so there is no range.
			name: "deletion",
			path: "src/app.go",
			diff: applyDiffBlock(0, "func A() int {\n\treturn 11\n}\n", ""),
			ok:   true, says: "src/app.go was modified",
			file: "package app\n\nfunc B() int {\n\tx := 2\n\treturn x\n}\n",
		},
		{
			name: "CRLF file",
			path: "src/win.txt",
			diff: applyDiffBlock(2, "two", "TWO\nTWO-B"),
			ok:   true, says: "src/win.txt was modified",
			file:   "one\r\nTWO\r\nTWO-B\r\nthree\r\n",
			ranges: [][2]int{{2, 3}},
		},
	}

	want := map[string]int{} // call id -> step
	for i, st := range steps {
		r := s.call("apply_diff", map[string]any{"path": st.path, "diff": st.diff})
		id := fmt.Sprint(s.next)
		if r.OK != st.ok || r.code() != st.code {
			t.Fatalf("%s: result %+v (denial %+v), want ok=%v code=%q", st.name, r, r.Denial, st.ok, st.code)
		}
		if st.code != "" && r.Denial.Param != "diff" {
			t.Errorf("%s: denial %+v, want it on the diff parameter", st.name, r.Denial)
		}
		if !strings.Contains(r.Output+r.Error, st.says) {
			t.Errorf("%s: output %q, error %q; want %q", st.name, r.Output, r.Error, st.says)
		}
		got, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(st.path)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != st.file {
			t.Fatalf("%s: %s =\n%q\nwant\n%q", st.name, st.path, got, st.file)
		}
		if st.ok {
			want[id] = i
		}
	}

	f, err := os.Open(filepath.Join(ws, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec applyDiffRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		ig := rec.Metadata.IG
		if ig.Tool != "apply_diff" || ig.Decision != "allow" {
			continue
		}
		i, ok := want[ig.CallID]
		if !ok {
			t.Errorf("an allow record for call %s, which changed nothing", ig.CallID)
			continue
		}
		seen[ig.CallID] = true
		st := steps[i]
		if len(rec.Files) != 1 || rec.Files[0].Path != st.path || len(rec.Files[0].Conversations) != 1 {
			t.Errorf("%s: record files %+v", st.name, rec.Files)
			continue
		}
		sum := sha256.Sum256([]byte(st.file))
		if ig.After != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: after_sha256 %s, want the hash of the new content", st.name, ig.After)
		}
		var got [][2]int
		for _, r := range rec.Files[0].Conversations[0].Ranges {
			got = append(got, [2]int{r.Start, r.End})
			if h := applyDiffRangeHash(st.file, r.Start, r.End); r.Hash != h {
				t.Errorf("%s: lines %d-%d hash %s, recomputed %s", st.name, r.Start, r.End, r.Hash, h)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(st.ranges) {
			t.Errorf("%s: ledger ranges %v, want %v", st.name, got, st.ranges)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for id, i := range want {
		if !seen[id] {
			t.Errorf("%s: no allow record for call %s", steps[i].name, id)
		}
	}
}
