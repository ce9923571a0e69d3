// Package audit answers an auditor's questions about a ledger: is it intact
// (Verify, sealed checkpoints), who wrote this line (Blame), what happened
// under this intent (Log, Stats, Report), and moves records in and out of it
// (Export, Import). It reads the ledger as the only source of truth; the
// index it keeps under .orchestration/index/ is derived, rebuilt when it does
// not match the ledger, and only ever narrows which ledger lines are read.
package audit

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/intentgate/intentgate/orchestration"
)

// SchemaJSON is the Agent Trace 0.1.0 trace-record schema every record is
// validated against. The file next to this one is the source of truth; a test
// keeps it identical to the repository's testdata copy.
//
//go:embed agent-trace-0.1.0.schema.json
var SchemaJSON []byte

// The validator is github.com/google/jsonschema-go, which the MCP SDK links
// in anyway and whose package initialization is light: a hook process pays
// for no JSON Schema compilation at start, and this schema is resolved only
// when a line is first validated. It does not assert formats, so the three
// the schema names (uuid, date-time, uri) are checked by checkFormats.
var (
	schemaOnce sync.Once
	schemaVal  *jsonschema.Resolved
	schemaErr  error
)

// compiledSchema resolves SchemaJSON once, on first use.
func compiledSchema() (*jsonschema.Resolved, error) {
	schemaOnce.Do(func() {
		var s jsonschema.Schema
		if err := json.Unmarshal(SchemaJSON, &s); err != nil {
			schemaErr = fmt.Errorf("agent trace schema: %w", err)
			return
		}
		schemaVal, schemaErr = s.Resolve(nil)
		if schemaErr != nil {
			schemaErr = fmt.Errorf("agent trace schema: %w", schemaErr)
		}
	})
	return schemaVal, schemaErr
}

// ValidateLine checks one ledger line against Agent Trace 0.1.0. A record in
// the seed shape (no version, relative_path and friends) is valid when the
// record it normalizes to is: the seed shape is a setting, not damage. It
// reports whether the line was in the seed shape.
func ValidateLine(raw []byte, rec *orchestration.Record) (seed bool, err error) {
	sch, err := compiledSchema()
	if err != nil {
		return false, err
	}
	inst, err := decodeJSON(raw)
	if err != nil {
		return false, fmt.Errorf("not JSON: %w", err)
	}
	if obj, ok := inst.(map[string]any); ok && rec != nil {
		if _, hasVersion := obj["version"]; !hasVersion {
			norm, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
			if err != nil {
				return true, err
			}
			if inst, err = decodeJSON(norm); err != nil {
				return true, err
			}
			seed = true
		}
	}
	inst = numbers(inst)
	if err := sch.Validate(inst); err != nil {
		return seed, fmt.Errorf("not Agent Trace 0.1.0: %s", strings.TrimPrefix(err.Error(), "validating root: "))
	}
	if err := checkFormats(inst); err != nil {
		return seed, fmt.Errorf("not Agent Trace 0.1.0: %w", err)
	}
	return seed, nil
}

// numbers turns the json.Number values decodeJSON keeps into Go numbers,
// which is what the validator types as integer or number.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil || math.IsInf(f, 0) {
			return f
		}
	}
	return v
}

// checkFormats asserts the formats the schema names, where it names them:
// the record's id (uuid; its pattern already holds it to the UUID shape),
// timestamp (an RFC 3339 date-time) and every conversation's and related
// resource's url (an absolute URI).
func checkFormats(inst any) error {
	obj, ok := inst.(map[string]any)
	if !ok {
		return nil
	}
	if ts, ok := obj["timestamp"].(string); ok {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			return fmt.Errorf("at /timestamp: %q is not a valid date-time", ts)
		}
	}
	uri := func(at string, v any) error {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		if u, err := url.Parse(s); err != nil || !u.IsAbs() {
			return fmt.Errorf("at %s: %q is not a valid uri", at, s)
		}
		return nil
	}
	files, _ := obj["files"].([]any)
	for i, f := range files {
		fo, _ := f.(map[string]any)
		convs, _ := fo["conversations"].([]any)
		for j, c := range convs {
			co, _ := c.(map[string]any)
			at := "/files/" + strconv.Itoa(i) + "/conversations/" + strconv.Itoa(j)
			if err := uri(at+"/url", co["url"]); err != nil {
				return err
			}
			rel, _ := co["related"].([]any)
			for k, r := range rel {
				ro, _ := r.(map[string]any)
				if err := uri(at+"/related/"+strconv.Itoa(k)+"/url", ro["url"]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
