package main

import (
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

	"github.com/intentgate/intentgate/internal/gate"
)

// Helpers of the hook contract tests: each sends an agent's documented (or,
// for Claude Code, captured) payloads to the built binary, as the agent
// would, in a temporary git workspace.

const hookIntents = `active_intents:
  - id: INT-001
    name: app
    status: IN_PROGRESS
    owned_scope: ["src/**", "README.md"]
  - id: INT-009
    name: docs
    status: PENDING
    owned_scope: ["docs/**"]
`

// placeholder is the workspace in the testdata payloads.
const placeholder = "/home/user/project"

type hookEnv struct {
	t     *testing.T
	agent string
	ws    string
}

func newHookEnv(t *testing.T, agent string, files map[string]string) *hookEnv {
	t.Helper()
	return &hookEnv{t: t, agent: agent, ws: e2eWorkspace(t, hookIntents, files)}
}

// payload is testdata/hooks/<agent>/<name>.json with the workspace in place
// of the placeholder, and set applied: "tool_input.file_path" -> value. A
// string value may hold the placeholder too.
func (e *hookEnv) payload(name string, set map[string]any) []byte {
	e.t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "hooks", e.agent, name+".json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
	for path, v := range set {
		keys := strings.Split(path, ".")
		m := doc
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		if v == nil {
			delete(m, keys[len(keys)-1])
		} else {
			m[keys[len(keys)-1]] = v
		}
	}
	out, err := json.Marshal(e.rewrite(doc))
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// rewrite replaces the placeholder workspace in every string of v.
func (e *hookEnv) rewrite(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, placeholder, e.ws)
	case map[string]any:
		for k, vv := range x {
			x[k] = e.rewrite(vv)
		}
	case []any:
		for i, vv := range x {
			x[i] = e.rewrite(vv)
		}
	}
	return v
}

func (e *hookEnv) path(rel string) string { return filepath.Join(e.ws, filepath.FromSlash(rel)) }

type hookOut struct {
	stdout, stderr string
	code           int
}

// run sends raw to `intentgate hook <agent>`, from a directory that is not
// the workspace: the hook must find it from the payload.
func (e *hookEnv) run(raw []byte, args ...string) hookOut {
	e.t.Helper()
	cmd := exec.Command(e2eBinary(e.t), append([]string{"hook", e.agent}, args...)...)
	cmd.Dir = e.t.TempDir()
	// The tests may themselves run under an agent: its project is not theirs.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") && !strings.HasPrefix(kv, "GEMINI_PROJECT_DIR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin = bytes.NewReader(raw)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return hookOut{stdout.String(), stderr.String(), code}
}

// send runs a testdata payload and requires exit status 0.
func (e *hookEnv) send(name string, set map[string]any) hookOut {
	e.t.Helper()
	out := e.run(e.payload(name, set))
	if out.code != 0 {
		e.t.Fatalf("%s: exit %d, stderr %q", name, out.code, out.stderr)
	}
	return out
}

func (e *hookEnv) write(rel, content string) {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *hookEnv) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// intentUse runs `intentgate intent use`.
func (e *hookEnv) intentUse(session, id string) string {
	e.t.Helper()
	out, err := exec.Command(e2eBinary(e.t), "intent", "use", id, "--session", session, "-w", e.ws).CombinedOutput()
	if err != nil {
		e.t.Fatalf("intent use %s: %v\n%s", id, err, out)
	}
	return string(out)
}

// hookRecord is a ledger record as the tests decode it (see ledgerLine).
type hookRecord = ledgerLine

func (r hookRecord) path() string {
	if len(r.Files) == 0 {
		return ""
	}
	return r.Files[0].Path
}

// ranges lists the record's ranges as "a-b", checking each content hash
// against content, the file as the change left it.
func (r hookRecord) ranges(t *testing.T, content string) []string {
	t.Helper()
	var out []string
	for _, f := range r.Files {
		for _, c := range f.Conversations {
			for _, rg := range c.Ranges {
				out = append(out, fmt.Sprintf("%d-%d", rg.Start, rg.End))
				if content != "" {
					if want := rangeHash([]byte(content), rg.Start, rg.End); rg.Hash != want {
						t.Errorf("%s range %d-%d hash %s, want %s", f.Path, rg.Start, rg.End, rg.Hash, want)
					}
				}
			}
		}
	}
	return out
}

func (e *hookEnv) ledger() []hookRecord {
	e.t.Helper()
	b, err := os.ReadFile(e.path(".orchestration/agent_trace.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var out []hookRecord
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r hookRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			e.t.Fatalf("ledger line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// lastRecord returns the newest ledger record about rel.
func (e *hookEnv) lastRecord(rel string) hookRecord {
	e.t.Helper()
	recs := e.ledger()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].path() == rel {
			return recs[i]
		}
	}
	e.t.Fatalf("no ledger record for %s", rel)
	return hookRecord{}
}

type denialOut struct {
	Code     string `json:"error"`
	Tool     string `json:"tool"`
	Path     string `json:"path"`
	Intent   string `json:"intent"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
	Expected string `json:"expected_sha256"`
	Actual   string `json:"actual_sha256"`
}

func decodeDenial(t *testing.T, s string) denialOut {
	t.Helper()
	var d denialOut
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("denial %q: %v", s, err)
	}
	if d.Code == "" || d.Message == "" {
		t.Fatalf("denial %q lacks a code or a message", s)
	}
	return d
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// decodeObject decodes stdout as exactly one JSON object.
func decodeObject(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout %q is not a JSON object: %v", stdout, err)
	}
	if dec.More() {
		t.Fatalf("stdout %q holds more than one JSON value", stdout)
	}
	return m
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// sessionIntent reads a session's active intent the way the engine does.
func (e *hookEnv) sessionIntent(session string) string {
	e.t.Helper()
	g, err := gate.Open(e.ws, gate.Options{Version: version})
	if err != nil {
		e.t.Fatal(err)
	}
	defer g.Close()
	s, err := g.Stores().Sessions.Load(session)
	if err != nil {
		e.t.Fatal(err)
	}
	return s.Intent
}
