package orchestration

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const recordTestSchemaID = "https://agent-trace.dev/schemas/v1/trace-record.json"

var (
	recordTestSchemaOnce sync.Once
	recordTestSchemaVal  *jsonschema.Schema
	recordTestSchemaErr  error
)

// recordTestSchema compiles testdata/agent-trace-0.1.0.schema.json (at the
// module root) with format assertions on.
func recordTestSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	recordTestSchemaOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "agent-trace-0.1.0.schema.json"))
		if err != nil {
			recordTestSchemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			recordTestSchemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(recordTestSchemaID, doc); err != nil {
			recordTestSchemaErr = err
			return
		}
		recordTestSchemaVal, recordTestSchemaErr = c.Compile(recordTestSchemaID)
	})
	if recordTestSchemaErr != nil {
		t.Fatalf("schema: %v", recordTestSchemaErr)
	}
	return recordTestSchemaVal
}

func recordTestValidate(t testing.TB, line []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		t.Fatalf("record is not JSON: %v\n%s", err, line)
	}
	return recordTestSchema(t).Validate(inst)
}

var recordTestTime = time.Date(2026, 2, 16, 12, 0, 0, 0, time.UTC)

// recordTestInputs are one record of each kind the trace hook writes.
func recordTestInputs() map[string]RecordInput {
	denial := json.RawMessage(`{"error":"SCOPE_VIOLATION","tool":"write_to_file","path":"src/billing/tax.go",
		"intent":"INT-001","message":"src/billing/tax.go is outside the owned_scope of INT-001 (src/auth/**)"}`)
	base := func(m Meta, path string, ranges []Range) RecordInput {
		m.Session, m.CallID, m.Tool = "sess-42", "call-7", "write_to_file"
		return RecordInput{
			Time: recordTestTime, Revision: "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0", ToolVersion: "0.1.0",
			Model: "anthropic/claude-opus-4-5", AgentName: "claude-code", Path: path, Ranges: ranges, Meta: m,
		}
	}
	return map[string]RecordInput{
		"create": base(Meta{Intent: "INT-001", Mutation: MutationCreate, AfterSHA256: strings.Repeat("b", 64)},
			"src/auth/jwt.go", []Range{{StartLine: 1, EndLine: 40, ContentHash: HashLines("x")}}),
		"modify": base(Meta{Intent: "INT-001", Mutation: MutationModify, BeforeSHA256: strings.Repeat("a", 64), AfterSHA256: strings.Repeat("b", 64), DeletedLines: 3},
			"src/auth/jwt.go", []Range{{StartLine: 12, EndLine: 20, ContentHash: HashLines("y")}, {StartLine: 31, EndLine: 31, ContentHash: HashLines("z")}}),
		"delete": base(Meta{Intent: "INT-001", Mutation: MutationDelete, BeforeSHA256: strings.Repeat("a", 64), DeletedLines: 12},
			"src/auth/old.go", nil),
		"denial": base(Meta{Intent: "INT-001", Decision: DecisionDeny, Denial: denial},
			"src/billing/tax.go", nil),
		"denial without file": base(Meta{Decision: DecisionDeny, Denial: json.RawMessage(`{"error":"NO_ACTIVE_INTENT"}`)},
			"", nil),
		"denial of an escaping path": base(Meta{Intent: "INT-001", Decision: DecisionDeny, Denial: json.RawMessage(`{"error":"PATH_ESCAPE","path":"../../etc/passwd"}`)},
			"../../etc/passwd", nil),
		"violation": base(Meta{Intent: "INT-001", Decision: DecisionViolation, AfterSHA256: strings.Repeat("c", 64)},
			"src/billing/tax.go", []Range{{StartLine: 5, EndLine: 6, ContentHash: HashLines("v", "w")}}),
		"no vcs, no session, no model": {Path: "README.md", Meta: Meta{Intent: "INT-002", Mutation: MutationModify}},
	}
}

func TestRecordValidatesAgainstSchema(t *testing.T) {
	for name, in := range recordTestInputs() {
		t.Run(name, func(t *testing.T) {
			rec, err := NewRecord(in)
			if err != nil {
				t.Fatalf("NewRecord: %v", err)
			}
			rec.Meta.Prev = HashLines("previous line")
			line, err := MarshalShape(rec, ShapeAgentTrace)
			if err != nil {
				t.Fatalf("MarshalShape: %v", err)
			}
			if err := recordTestValidate(t, line); err != nil {
				t.Errorf("record does not validate: %v\n%s", err, line)
			}
			back, err := ParseRecord(line)
			if err != nil {
				t.Fatalf("ParseRecord: %v", err)
			}
			if !reflect.DeepEqual(back, rec) {
				t.Errorf("ParseRecord(MarshalShape(rec)) =\n%#v\nwant\n%#v", back, rec)
			}
			if std, err := json.Marshal(rec); err != nil || !bytes.Equal(std, line) {
				t.Errorf("json.Marshal(rec) = %s, %v; want %s", std, err, line)
			}
		})
	}
}

func TestNewRecordShapes(t *testing.T) {
	ins := recordTestInputs()
	mustNew := func(name string) *Record {
		t.Helper()
		rec, err := NewRecord(ins[name])
		if err != nil {
			t.Fatalf("NewRecord(%s): %v", name, err)
		}
		return rec
	}
	rec := mustNew("modify")
	if u, err := uuid.Parse(rec.ID); err != nil || u.Version() != 7 {
		t.Errorf("id %q is not a UUIDv7 (%v)", rec.ID, err)
	}
	rec.ID = "01950000-0000-7000-8000-000000000001"
	got, err := MarshalShape(rec, ShapeAgentTrace)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"0.1.0","id":"01950000-0000-7000-8000-000000000001","timestamp":"2026-02-16T12:00:00Z",` +
		`"vcs":{"type":"git","revision":"a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0"},"tool":{"name":"intentgate","version":"0.1.0"},` +
		`"files":[{"path":"src/auth/jwt.go","conversations":[{"url":"intentgate://session/sess-42",` +
		`"contributor":{"type":"ai","model_id":"anthropic/claude-opus-4-5"},` +
		`"ranges":[{"start_line":12,"end_line":20,"content_hash":"` + HashLines("y") + `"},{"start_line":31,"end_line":31,"content_hash":"` + HashLines("z") + `"}],` +
		`"related":[{"type":"intent","url":"intent:INT-001"}]}]}],` +
		`"metadata":{"dev.intentgate":{"intent":"INT-001","session":"sess-42","call_id":"call-7","tool":"write_to_file","agent":"claude-code",` +
		`"mutation":"modify","decision":"allow","before_sha256":"` + strings.Repeat("a", 64) + `","after_sha256":"` + strings.Repeat("b", 64) + `",` +
		`"deleted_lines":3,"prev":""}}}`
	if string(got) != want {
		t.Errorf("MarshalShape(agent trace) =\n%s\nwant\n%s", got, want)
	}

	seed, err := MarshalShape(rec, ShapeSeed)
	if err != nil {
		t.Fatal(err)
	}
	wantSeed := `{"id":"01950000-0000-7000-8000-000000000001","timestamp":"2026-02-16T12:00:00Z",` +
		`"vcs":{"revision_id":"a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0"},` +
		`"files":[{"relative_path":"src/auth/jwt.go","conversations":[{"url":"intentgate://session/sess-42",` +
		`"contributor":{"entity_type":"AI","model_identifier":"anthropic/claude-opus-4-5"},` +
		`"ranges":[{"start_line":12,"end_line":20,"content_hash":"` + HashLines("y") + `"},{"start_line":31,"end_line":31,"content_hash":"` + HashLines("z") + `"}],` +
		`"related":[{"type":"specification","value":"INT-001"}]}]}],` +
		`"metadata":{"dev.intentgate":{"intent":"INT-001","session":"sess-42","call_id":"call-7","tool":"write_to_file","agent":"claude-code",` +
		`"mutation":"modify","decision":"allow","before_sha256":"` + strings.Repeat("a", 64) + `","after_sha256":"` + strings.Repeat("b", 64) + `",` +
		`"deleted_lines":3,"prev":""}}}`
	if string(seed) != wantSeed {
		t.Errorf("MarshalShape(seed) =\n%s\nwant\n%s", seed, wantSeed)
	}
	if err := recordTestValidate(t, seed); err == nil {
		t.Errorf("the seed shape validates against the Agent Trace schema; the schema is too loose")
	}

	// Read back, the seed shape is the same record, less what it has no
	// field for, and then valid Agent Trace.
	back, err := ParseRecord(seed)
	if err != nil {
		t.Fatalf("ParseRecord(seed): %v", err)
	}
	wantBack := *rec
	wantBack.Tool = nil
	if !reflect.DeepEqual(back, &wantBack) {
		t.Errorf("ParseRecord(seed) =\n%#v\nwant\n%#v", back, &wantBack)
	}
	line, err := MarshalShape(back, ShapeAgentTrace)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordTestValidate(t, line); err != nil {
		t.Errorf("seed record read back does not validate: %v\n%s", err, line)
	}
}

// A record written by hand in the seed specification's shape, as a team
// with older tooling would have it.
func TestParseRecordSeedShape(t *testing.T) {
	line := `{"id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-02-16T14:00:00+02:00",` +
		`"vcs":{"revision_id":"abc123"},"files":[{"relative_path":"src/auth/middleware.ts","conversations":[` +
		`{"url":"https://example.com/log/1","contributor":{"entity_type":"AI","model_identifier":"claude-3-5-sonnet"},` +
		`"ranges":[{"start_line":15,"end_line":45,"content_hash":"sha256:a8f5"}],` +
		`"related":[{"type":"specification","value":"REQ-001"}]}]}]}`
	rec, err := ParseRecord([]byte(line))
	if err != nil {
		t.Fatalf("ParseRecord: %v", err)
	}
	want := &Record{
		Version:   AgentTraceVersion,
		ID:        "550e8400-e29b-41d4-a716-446655440000",
		Timestamp: time.Date(2026, 2, 16, 12, 0, 0, 0, time.UTC),
		VCS:       &VCS{Type: "git", Revision: "abc123"},
		Files: []TraceFile{{Path: "src/auth/middleware.ts", Conversations: []TraceConversation{{
			URL:         "https://example.com/log/1",
			Contributor: &TraceContributor{Type: "ai", ModelID: "claude-3-5-sonnet"},
			Ranges:      []Range{{StartLine: 15, EndLine: 45, ContentHash: "sha256:a8f5"}},
			Related:     []TraceRelated{{Type: "intent", URL: "intent:REQ-001"}},
		}}}},
	}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("ParseRecord(seed) =\n%#v\nwant\n%#v", rec, want)
	}
	if got := rec.Intent(); got != "REQ-001" {
		t.Errorf("Intent() = %q, want REQ-001", got)
	}
	out, err := MarshalShape(rec, ShapeAgentTrace)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordTestValidate(t, out); err != nil {
		t.Errorf("seed record as Agent Trace does not validate: %v\n%s", err, out)
	}
}

func TestSchemaRejects(t *testing.T) {
	valid := `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z",` +
		`"files":[{"path":"src/app.ts","conversations":[{"contributor":{"type":"ai"},"ranges":[{"start_line":1,"end_line":50}]}]}]}`
	if err := recordTestValidate(t, []byte(valid)); err != nil {
		t.Fatalf("the spec's minimal record does not validate: %v", err)
	}
	bad := map[string]string{
		"two-part version": strings.Replace(valid, `"0.1.0"`, `"0.1"`, 1),
		"no files":         strings.Replace(valid, `,"files":[{"path":"src/app.ts","conversations":[{"contributor":{"type":"ai"},"ranges":[{"start_line":1,"end_line":50}]}]}]`, ``, 1),
		"line 0":           strings.Replace(valid, `"start_line":1`, `"start_line":0`, 1),
		"no ranges":        strings.Replace(valid, `,"ranges":[{"start_line":1,"end_line":50}]`, ``, 1),
		"contributor type": strings.Replace(valid, `"type":"ai"`, `"type":"AI"`, 1),
		"offset timestamp": strings.Replace(valid, `10:00:00Z`, `10:00:00+01:00`, 1),
		"not a uuid":       strings.Replace(valid, `550e8400-e29b`, `550e8400-e29bx`, 1),
		"relative url":     strings.Replace(valid, `"contributor"`, `"url":"sessions/1","contributor"`, 1),
		"unknown field":    strings.Replace(valid, `"path"`, `"relative_path":"x","path"`, 1),
		"vcs without type": strings.Replace(valid, `"files"`, `"vcs":{"revision":"abc"},"files"`, 1),
	}
	for name, line := range bad {
		if err := recordTestValidate(t, []byte(line)); err == nil {
			t.Errorf("%s: validates, want an error:\n%s", name, line)
		}
	}
}

func TestNewRecordErrors(t *testing.T) {
	tests := map[string]RecordInput{
		"no mutation":       {Path: "a.go"},
		"read":              {Path: "a.go", Meta: Meta{Mutation: "read"}},
		"unknown decision":  {Path: "a.go", Meta: Meta{Mutation: MutationCreate, Decision: "maybe"}},
		"absolute path":     {Path: "/etc/passwd", Meta: Meta{Mutation: MutationCreate}},
		"dotdot path":       {Path: "../x", Meta: Meta{Mutation: MutationCreate}},
		"unclean path":      {Path: "a//b", Meta: Meta{Mutation: MutationCreate}},
		"no path":           {Meta: Meta{Mutation: MutationCreate}},
		"bad denial":        {Meta: Meta{Decision: DecisionDeny, Denial: json.RawMessage(`{`)}},
		"ranges out of ord": {Path: "a.go", Meta: Meta{Mutation: MutationModify}, Ranges: []Range{{StartLine: 5, EndLine: 6}, {StartLine: 6, EndLine: 7}}},
		"range at line 0":   {Path: "a.go", Meta: Meta{Mutation: MutationModify}, Ranges: []Range{{StartLine: 0, EndLine: 1}}},
	}
	for name, in := range tests {
		if _, err := NewRecord(in); err == nil {
			t.Errorf("NewRecord(%s) succeeded, want an error", name)
		}
	}
}

func TestParseRecordErrors(t *testing.T) {
	tests := map[string]string{
		"not json":      `{`,
		"array":         `[]`,
		"no id":         `{"version":"0.1.0","timestamp":"2026-01-25T10:00:00Z","files":[]}`,
		"bad timestamp": `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"yesterday","files":[]}`,
		"no files":      `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z"}`,
		"no path":       `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[{"conversations":[]}]}`,
		"bad range":     `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[{"path":"a","conversations":[{"ranges":[{"start_line":3,"end_line":2}]}]}]}`,
		"bad meta":      `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[],"metadata":{"dev.intentgate":{"prev":1}}}`,
	}
	for name, line := range tests {
		if rec, err := ParseRecord([]byte(line)); err == nil {
			t.Errorf("ParseRecord(%s) = %+v, want an error", name, rec)
		}
	}
}

// Other vendors' metadata survives a read and a write.
func TestParseRecordKeepsOtherMetadata(t *testing.T) {
	line := `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[],` +
		`"metadata":{"confidence":0.95,"dev.cursor":{ "workspace_id" : "ws-abc123" },"dev.intentgate":{"intent":"INT-1","decision":"deny","mutation":"denial","denial":{ "error": "<x>" },"prev":""}}}`
	rec, err := ParseRecord([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalShape(rec, ShapeAgentTrace)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"0.1.0","id":"550e8400-e29b-41d4-a716-446655440000","timestamp":"2026-01-25T10:00:00Z","files":[],` +
		`"metadata":{"confidence":0.95,"dev.cursor":{"workspace_id":"ws-abc123"},"dev.intentgate":{"intent":"INT-1","session":"","call_id":"","tool":"","mutation":"denial","decision":"deny","denial":{"error":"<x>"},"prev":""}}}`
	if string(out) != want {
		t.Errorf("MarshalShape =\n%s\nwant\n%s", out, want)
	}
	if err := recordTestValidate(t, out); err != nil {
		t.Error(err)
	}
}
