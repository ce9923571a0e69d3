// Package audit answers an auditor's questions about a ledger: is it intact
// (Verify, sealed checkpoints), who wrote this line (Blame), what happened
// under this intent (Log, Stats, Report), and moves records in and out of it
// (Export, Import). It reads the ledger as the only source of truth; the
// index it keeps under .orchestration/index/ is derived, rebuilt when it does
// not match the ledger, and only ever narrows which ledger lines are read.
package audit

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var schemaPrinter = message.NewPrinter(language.English)

// SchemaJSON is the Agent Trace 0.1.0 trace-record schema every record is
// validated against. The file next to this one is the source of truth; a test
// keeps it identical to the repository's testdata copy.
//
//go:embed agent-trace-0.1.0.schema.json
var SchemaJSON []byte

const schemaID = "https://agent-trace.dev/schemas/v1/trace-record.json"

var (
	schemaOnce sync.Once
	schemaVal  *jsonschema.Schema
	schemaErr  error
)

// compiledSchema compiles SchemaJSON once, with format assertions on (uuid,
// date-time, uri), as the record tests do.
func compiledSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
		if err != nil {
			schemaErr = fmt.Errorf("agent trace schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(schemaID, doc); err != nil {
			schemaErr = fmt.Errorf("agent trace schema: %w", err)
			return
		}
		schemaVal, schemaErr = c.Compile(schemaID)
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
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return seed, fmt.Errorf("not Agent Trace 0.1.0: %s", schemaMessage(ve))
		}
		return seed, fmt.Errorf("not Agent Trace 0.1.0: %w", err)
	}
	return seed, nil
}

// schemaMessage is the innermost causes of a validation error on one line.
func schemaMessage(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/"
			if len(e.InstanceLocation) > 0 {
				loc = ""
				for _, p := range e.InstanceLocation {
					loc += "/" + p
				}
			}
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(schemaPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) > 3 {
		leaves = append(leaves[:3], fmt.Sprintf("and %d more", len(leaves)-3))
	}
	var b bytes.Buffer
	for i, l := range leaves {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(l)
	}
	return b.String()
}
