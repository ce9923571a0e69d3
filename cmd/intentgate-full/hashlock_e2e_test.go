//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

// TestHashLockThroughDispatch plays the hash lock's attacks through the
// binary: expected_sha256 never stands in for a read, no refusal names the
// hash of a file the session has not read, and a read that did not show the
// whole file (a binary file, a line range) is no baseline.
func TestHashLockThroughDispatch(t *testing.T) {
	const body = "package f\n\nvar secret = 41\n"
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	binary := "\x00\x01ELF" + strings.Repeat("x", 100)

	cases := []struct {
		name  string
		file  string // content of src/f.go
		read  map[string]any
		args  map[string]any
		want  engine.Code
		leaks bool // the answer may name the file's hash (the session read it)
	}{
		{name: "unread, the right expected_sha256", file: body,
			args: map[string]any{"expected_sha256": sum(body)}, want: engine.NotRead},
		{name: "unread, the right expected_sha256 with prefix", file: body,
			args: map[string]any{"expected_sha256": "sha256:" + strings.ToUpper(sum(body))}, want: engine.NotRead},
		{name: "unread, a wrong expected_sha256", file: body,
			args: map[string]any{"expected_sha256": strings.Repeat("0", 64)}, want: engine.NotRead},
		{name: "unread, no expected_sha256", file: body, want: engine.NotRead},
		{name: "binary shown as not shown", file: binary,
			read: map[string]any{}, want: engine.NotRead},
		{name: "binary shown as not shown, the right expected_sha256", file: binary,
			read: map[string]any{}, args: map[string]any{"expected_sha256": sum(binary)}, want: engine.NotRead},
		{name: "a line range", file: body,
			read: map[string]any{"start_line": 1, "end_line": 2}, want: engine.NotRead},
		{name: "a line range from line 2 to the end", file: body,
			read: map[string]any{"start_line": 2}, want: engine.NotRead},
		{name: "a line range, the right expected_sha256", file: body,
			read: map[string]any{"start_line": 3, "end_line": 3}, args: map[string]any{"expected_sha256": sum(body)}, want: engine.NotRead},
		{name: "read whole, a wrong expected_sha256", file: body,
			read: map[string]any{}, args: map[string]any{"expected_sha256": strings.Repeat("0", 64)}, want: engine.StaleFile, leaks: true},
		{name: "read whole, the right expected_sha256", file: body,
			read: map[string]any{}, args: map[string]any{"expected_sha256": sum(body)}, want: atkAllow, leaks: true},
		{name: "read whole with an explicit full range", file: body,
			read: map[string]any{"start_line": 1, "end_line": 3}, want: atkAllow, leaks: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newAtkEnv(t, atkOpts{})
			e.write("src/f.go", tc.file)
			p := e.start()
			p.selectIntent("INT-001")
			if tc.read != nil {
				args := map[string]any{"path": "src/f.go"}
				for k, v := range tc.read {
					args[k] = v
				}
				if res := p.send("read_file", args); !res.OK {
					t.Fatalf("read_file %v: %s", args, atkDescribe(res))
				}
			}
			before := p.raw.Len()
			args := map[string]any{"path": "src/f.go", "content": "PWNED\n"}
			for k, v := range tc.args {
				args[k] = v
			}
			res := p.send("write_to_file", args)
			e.wantCode("write_to_file src/f.go", res, tc.want)
			answer := p.raw.Bytes()[before:]
			if !tc.leaks && bytes.Contains(bytes.ToLower(answer), []byte(sum(tc.file))) {
				t.Errorf("the refusal names the hash of a file the session has not read: %s", answer)
			}
			got, err := os.ReadFile(e.abs("src/f.go"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != atkAllow && string(got) != tc.file {
				t.Errorf("refused write changed src/f.go to %q", got)
			}
			if tc.want == atkAllow && string(got) != "PWNED\n" {
				t.Errorf("allowed write left src/f.go as %q", got)
			}
			if tc.want != atkAllow {
				e.wantDenyRecord(p.id(), tc.want)
			}
			p.close()
		})
	}
}

// TestHashLockNoFileExpected: a write whose expected_sha256 names a content
// for a file that does not exist is refused (STALE_FILE) without naming any
// hash as the actual one, and nothing is created.
func TestHashLockNoFileExpected(t *testing.T) {
	e := newAtkEnv(t, atkOpts{})
	p := e.start()
	p.selectIntent("INT-001")
	res := p.send("write_to_file", map[string]any{"path": "src/new.go", "content": "x\n", "expected_sha256": strings.Repeat("a", 64)})
	e.wantCode("write_to_file src/new.go with an expected hash", res, engine.StaleFile)
	if res.Denial != nil && res.Denial.ActualSHA256 != "" {
		t.Errorf("STALE_FILE for a missing file names actual %q", res.Denial.ActualSHA256)
	}
	if _, err := os.Stat(e.abs("src/new.go")); err == nil {
		t.Errorf("refused write created src/new.go")
	}
	res = p.send("write_to_file", map[string]any{"path": "src/new.go", "content": "x\n"})
	e.wantCode("write_to_file src/new.go", res, atkAllow)
	p.close()
}
