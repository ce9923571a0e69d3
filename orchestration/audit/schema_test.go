package audit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestValidateLineAgreesWithReference: ValidateLine (google/jsonschema-go
// plus the format checks) accepts and refuses what an independent validator
// with format assertions on (santhosh-tekuri/jsonschema, test-only, so its
// package initialization stays out of the binary) accepts and refuses.
const refID = "https://agent-trace.dev/schemas/v1/trace-record.json"

func TestValidateLineAgreesWithReference(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(refID, doc); err != nil {
		t.Fatal(err)
	}
	ref, err := c.Compile(refID)
	if err != nil {
		t.Fatal(err)
	}
	const good = `{"version":"0.1.0","id":"0192f0c4-7b1e-7c3a-9d2e-1a2b3c4d5e6f","timestamp":"2026-01-02T03:04:05.678Z",` +
		`"vcs":{"type":"git","revision":"abc"},"tool":{"name":"intentgate","version":"1"},` +
		`"files":[{"path":"src/a.go","conversations":[{"url":"intentgate:session/s1","contributor":{"type":"ai","model_id":"m/x"},` +
		`"ranges":[{"start_line":1,"end_line":2,"content_hash":"sha256:00"}],"related":[{"type":"intent","url":"intent:INT-001"}]}]}],` +
		`"metadata":{"dev.intentgate":{"n":1.5}}}`
	cases := map[string]string{
		"valid":                    good,
		"no version":               strings.Replace(good, `"version":"0.1.0",`, ``, 1),
		"version X.Y":              strings.Replace(good, `"0.1.0"`, `"0.1"`, 1),
		"id not a uuid":            strings.Replace(good, `0192f0c4-7b1e-7c3a`, `0192f0c4-7b1e-0c3a`, 1),
		"timestamp without Z":      strings.Replace(good, `.678Z`, `.678+01:00`, 1),
		"timestamp day 30 of Feb":  strings.Replace(good, `2026-01-02`, `2026-02-30`, 1),
		"timestamp month 13":       strings.Replace(good, `2026-01-02`, `2026-13-02`, 1),
		"timestamp hour 25":        strings.Replace(good, `T03:04`, `T25:04`, 1),
		"timestamp no seconds":     strings.Replace(good, `:05.678Z`, `Z`, 1),
		"relative url":             strings.Replace(good, `intentgate:session/s1`, `session/s1`, 1),
		"relative related url":     strings.Replace(good, `intent:INT-001`, `INT-001`, 1),
		"start_line 0":             strings.Replace(good, `"start_line":1`, `"start_line":0`, 1),
		"start_line 1.5":           strings.Replace(good, `"start_line":1`, `"start_line":1.5`, 1),
		"start_line 1.0":           strings.Replace(good, `"start_line":1`, `"start_line":1.0`, 1),
		"start_line a string":      strings.Replace(good, `"start_line":1`, `"start_line":"1"`, 1),
		"unknown top-level field":  strings.Replace(good, `"version"`, `"extra":1,"version"`, 1),
		"unknown field in a range": strings.Replace(good, `"end_line":2`, `"end_line":2,"x":1`, 1),
		"contributor robot":        strings.Replace(good, `"type":"ai"`, `"type":"robot"`, 1),
		"vcs type cvs":             strings.Replace(good, `"type":"git"`, `"type":"cvs"`, 1),
		"tool without version":     strings.Replace(good, `,"version":"1"`, ``, 1),
		"model_id too long":        strings.Replace(good, `"m/x"`, `"`+strings.Repeat("m", 251)+`"`, 1),
		"files not an array":       strings.Replace(good, `"files":[`, `"files":{"x":[`, 1) + "",
		"not an object":            `[1,2]`,
		"metadata not an object":   strings.Replace(good, `"metadata":{"dev.intentgate":{"n":1.5}}`, `"metadata":[]`, 1),
	}
	for name, line := range cases {
		t.Run(name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
			if err != nil {
				return // not JSON: nothing to compare
			}
			refErr := ref.Validate(inst)
			_, gotErr := ValidateLine([]byte(line), nil)
			if (refErr == nil) != (gotErr == nil) {
				t.Errorf("ValidateLine = %v, the reference validator says %v", gotErr, refErr)
			}
			if name == "valid" && gotErr != nil {
				t.Errorf("ValidateLine(valid) = %v", gotErr)
			}
		})
	}
}
