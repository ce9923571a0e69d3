package audit

import (
	"bytes"
	"net/url"

	"github.com/intentgate/intentgate/orchestration"
)

// ownRecordValid is the fast validator for the records intentgate writes: a
// line that is byte for byte what intentgate's own writer makes of the record
// it parses to, and whose values meet the Agent Trace 0.1.0 constraints the
// writer copies without checking (the id's form, the enums, the URIs, line
// numbers), is valid without running the JSON Schema. It only ever says yes;
// every other line (another writer's, the seed shape, anything that does not
// round-trip) goes to the full schema, which also says what is wrong.
func ownRecordValid(raw []byte, rec *orchestration.Record) bool {
	if !ownRecordValues(rec) {
		return false
	}
	again, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
	return err == nil && bytes.Equal(again, raw)
}

// ownRecordValues is ownRecordValid without the round trip: enough for a
// line orchestration.ParseCanonical read, which is the writer's bytes.
func ownRecordValues(rec *orchestration.Record) bool {
	if rec.Tool == nil || rec.Tool.Name != "intentgate" || rec.Tool.Version == "" || rec.Meta == nil || !idForm(rec.ID) {
		return false
	}
	if rec.VCS != nil {
		switch rec.VCS.Type {
		case "git", "jj", "hg", "svn":
		default:
			return false
		}
	}
	for _, f := range rec.Files {
		if f.Path == "" {
			return false
		}
		for _, c := range f.Conversations {
			if c.URL != "" && !absURI(c.URL) {
				return false
			}
			if c.Contributor != nil && (!contributorType(c.Contributor.Type) || len(c.Contributor.ModelID) > 250) {
				return false
			}
			for _, r := range c.Related {
				if r.Type == "" || !absURI(r.URL) {
					return false
				}
			}
			for _, r := range c.Ranges {
				if r.StartLine < 1 || r.EndLine < 1 || r.Contributor != nil {
					return false
				}
			}
		}
	}
	return true
}

func contributorType(t string) bool {
	switch t {
	case "human", "ai", "mixed", "unknown":
		return true
	}
	return false
}

// idForm is the schema's pattern for id:
// ^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$
func idForm(id string) bool {
	if len(id) != 36 {
		return false
	}
	// The pattern's own test, by hand (the regexp is the reference in tests).
	for i := 0; i < 36; i++ {
		c := id[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case i == 14:
			if c < '1' || c > '8' {
				return false
			}
		case i == 19:
			if c != '8' && c != '9' && c != 'a' && c != 'b' && c != 'A' && c != 'B' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return false
		}
	}
	return true
}

// absURI is the JSON Schema "uri" format as the validator applies it: an
// absolute URI.
func absURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs()
}
