package orchestration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intentgate/intentgate/internal/uuid"
)

// A ledger record is an Agent Trace 0.1.0 trace record (agent-trace.dev). What
// the format has no field for lives under metadata["dev.intentgate"] (Meta).
//
// URLs, so that any Agent Trace reader can follow them:
//   - a conversation's url is the intentgate session: intentgate://session/<id>,
//     the session id path-escaped;
//   - the intent is a related resource of type "intent" whose url is
//     intent:<id>, e.g. intent:INT-001.
const (
	AgentTraceVersion = "0.1.0"
	RecordToolName    = "intentgate"
	MetaKey           = "dev.intentgate"
	SessionURLPrefix  = "intentgate://session/"
	IntentURLPrefix   = "intent:"
	RelatedIntentType = "intent"
)

// Mutation classes (Meta.Mutation). Reads are never logged.
const (
	MutationCreate    = "create"
	MutationModify    = "modify"
	MutationDelete    = "delete"
	MutationViolation = "violation"
	MutationDenial    = "denial"
)

// Decisions (Meta.Decision). A violation is a change that happened although it
// should not have (an external agent reported a write the pre-hook would have
// refused); it is recorded as evidence, not as the intent's work.
const (
	DecisionAllow     = "allow"
	DecisionDeny      = "deny"
	DecisionViolation = "violation"
)

// Record is one Agent Trace trace record. Its JSON (MarshalJSON, MarshalShape)
// is exactly the 0.1.0 shape; ParseRecord also reads the seed shape.
type Record struct {
	Version   string
	ID        string    // a UUIDv7 for records intentgate writes
	Timestamp time.Time // written in UTC
	VCS       *VCS      // nil outside version control
	Tool      *TraceTool
	Files     []TraceFile
	// Meta is metadata["dev.intentgate"]; nil for a record of another tool.
	Meta *Meta
	// OtherMetadata holds the other keys of metadata, compacted, so that a
	// record of another tool survives a read and a write.
	OtherMetadata map[string]json.RawMessage
}

// VCS is the revision the line numbers of a record refer to.
type VCS struct {
	Type     string `json:"type"` // "git"
	Revision string `json:"revision"`
}

// TraceTool names the program that wrote a record.
type TraceTool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// TraceFile is one file of a record and the conversations that changed it.
type TraceFile struct {
	Path          string              `json:"path"` // workspace-relative, slash-separated
	Conversations []TraceConversation `json:"conversations"`
}

// TraceConversation is what one conversation (for us: one session) did to a
// file.
type TraceConversation struct {
	URL         string            `json:"url,omitempty"`
	Contributor *TraceContributor `json:"contributor,omitempty"`
	Ranges      []Range           `json:"ranges"`
	Related     []TraceRelated    `json:"related,omitempty"`
}

// TraceContributor says who produced lines: Type is "ai", "human", "mixed" or
// "unknown"; ModelID follows models.dev ("anthropic/claude-opus-4-5").
type TraceContributor struct {
	Type    string `json:"type"`
	ModelID string `json:"model_id,omitempty"`
}

// TraceRelated links a conversation to another resource.
type TraceRelated struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Meta is intentgate's part of a record, metadata["dev.intentgate"].
type Meta struct {
	Intent       string `json:"intent"`
	Session      string `json:"session"`
	CallID       string `json:"call_id"`
	Tool         string `json:"tool"`              // the tool the agent called, e.g. write_to_file
	Command      string `json:"command,omitempty"` // the shell command whose changes the record holds
	Agent        string `json:"agent,omitempty"`   // e.g. claude-code
	Mutation     string `json:"mutation"`
	Decision     string `json:"decision"`
	BeforeSHA256 string `json:"before_sha256,omitempty"` // lowercase hex of the file's bytes before
	AfterSHA256  string `json:"after_sha256,omitempty"`  // and after the change
	DeletedLines int    `json:"deleted_lines,omitempty"`
	// Denial is the denial JSON the agent was given, when Decision is deny.
	Denial json.RawMessage `json:"denial,omitempty"`
	// Recovered, when set, says the record was written on a later open:
	// a crash came between the change and its record (and why).
	Recovered string `json:"recovered,omitempty"`
	// Ambiguous, when set, says the change is a command's and another
	// session's together (both changed the file while the command ran):
	// the record does not say whose lines are whose, and blame credits
	// neither.
	Ambiguous string `json:"ambiguous,omitempty"`
	// Prev links the record to the ledger line before it: "sha256:" and the
	// hex SHA-256 of that line's bytes without its newline; "" for the first
	// line. Ledger.Append sets it.
	Prev string `json:"prev"`
}

// RecordInput is what NewRecord needs.
type RecordInput struct {
	Time        time.Time // zero means now
	Revision    string    // git HEAD; "" means no vcs block
	ToolVersion string    // intentgate's version; "" is written as "devel"
	Model       string    // models.dev id of the model
	AgentName   string    // copied to Meta.Agent when that is empty
	Path        string    // workspace-relative slash path; "" for a denial about no file
	Ranges      []Range
	Meta        Meta
}

// NewRecord builds the record of one change or refusal, with a fresh UUIDv7.
//
// A denial records the attempted file with an empty ranges list, or no file at
// all when Path is empty or not a workspace-relative path (the denial JSON in
// Meta.Denial still says what was asked). Meta.Decision defaults to allow;
// Meta.Mutation defaults to denial or violation for those decisions and must
// be create, modify or delete for an allowed change.
func NewRecord(in RecordInput) (*Record, error) {
	m := in.Meta
	m.Prev = ""
	if m.Agent == "" {
		m.Agent = in.AgentName
	}
	if m.Decision == "" {
		m.Decision = DecisionAllow
	}
	switch m.Decision {
	case DecisionAllow:
		switch m.Mutation {
		case MutationCreate, MutationModify, MutationDelete:
		case "":
			return nil, errors.New("record: missing mutation class")
		default:
			return nil, fmt.Errorf("record: mutation %q is not a change", m.Mutation)
		}
	case DecisionDeny:
		if m.Mutation == "" {
			m.Mutation = MutationDenial
		}
	case DecisionViolation:
		if m.Mutation == "" {
			m.Mutation = MutationViolation
		}
	default:
		return nil, fmt.Errorf("record: unknown decision %q", m.Decision)
	}
	switch m.Mutation {
	case MutationCreate, MutationModify, MutationDelete, MutationViolation, MutationDenial:
	default:
		return nil, fmt.Errorf("record: unknown mutation class %q", m.Mutation)
	}
	if len(m.Denial) > 0 {
		d, err := recordCompact(m.Denial)
		if err != nil {
			return nil, fmt.Errorf("record: denial: %w", err)
		}
		m.Denial = d
	}
	for i, r := range in.Ranges {
		if r.StartLine < 1 || r.EndLine < r.StartLine || (i > 0 && r.StartLine <= in.Ranges[i-1].EndLine) {
			return nil, fmt.Errorf("record: range %d-%d is invalid or out of order", r.StartLine, r.EndLine)
		}
	}

	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	ts := in.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	version := in.ToolVersion
	if version == "" {
		version = "devel"
	}
	rec := &Record{
		Version:   AgentTraceVersion,
		ID:        id.String(),
		Timestamp: ts.UTC(),
		Tool:      &TraceTool{Name: RecordToolName, Version: version},
		Files:     []TraceFile{},
		Meta:      &m,
	}
	if in.Revision != "" {
		rec.VCS = &VCS{Type: "git", Revision: in.Revision}
	}

	switch {
	case recordPathOK(in.Path):
	case in.Path == "" && m.Decision != DecisionAllow, m.Decision == DecisionDeny:
		return rec, nil
	default:
		return nil, fmt.Errorf("record: path %q is not workspace-relative", in.Path)
	}
	conv := TraceConversation{
		Contributor: &TraceContributor{Type: "ai", ModelID: recordTruncate(in.Model, 250)},
		Ranges:      []Range{},
	}
	if m.Session != "" {
		conv.URL = SessionURLPrefix + url.PathEscape(m.Session)
	}
	if m.Intent != "" {
		conv.Related = []TraceRelated{{Type: RelatedIntentType, URL: IntentURLPrefix + url.PathEscape(m.Intent)}}
	}
	if m.Decision != DecisionDeny {
		conv.Ranges = append(conv.Ranges, in.Ranges...)
	}
	rec.Files = append(rec.Files, TraceFile{Path: in.Path, Conversations: []TraceConversation{conv}})
	return rec, nil
}

// Intent is the intent a record belongs to: Meta.Intent, or for a record of
// another tool its first related resource of type intent.
func (r *Record) Intent() string {
	if r.Meta != nil {
		return r.Meta.Intent
	}
	for _, f := range r.Files {
		for _, c := range f.Conversations {
			for _, rel := range c.Related {
				if rel.Type == RelatedIntentType && strings.HasPrefix(rel.URL, IntentURLPrefix) {
					if id, err := url.PathUnescape(strings.TrimPrefix(rel.URL, IntentURLPrefix)); err == nil {
						return id
					}
				}
			}
		}
	}
	return ""
}

// RecordShape selects the JSON shape records are written in.
type RecordShape int

const (
	// ShapeAgentTrace is Agent Trace 0.1.0, the default.
	ShapeAgentTrace RecordShape = iota
	// ShapeSeed is the shape of the project's seed specification:
	// vcs.revision_id, files[].relative_path, contributor.entity_type and
	// model_identifier, related[{type:"specification", value:<intent id>}],
	// without version and tool. metadata["dev.intentgate"] is kept, so the
	// chain and the intent map work the same.
	ShapeSeed
)

func (s RecordShape) String() string {
	switch s {
	case ShapeAgentTrace:
		return "agent-trace"
	case ShapeSeed:
		return "seed"
	}
	return fmt.Sprintf("RecordShape(%d)", int(s))
}

// MarshalJSON writes the Agent Trace 0.1.0 shape.
func (r Record) MarshalJSON() ([]byte, error) {
	return MarshalShape(&r, ShapeAgentTrace)
}

// UnmarshalJSON reads either shape, as ParseRecord.
func (r *Record) UnmarshalJSON(b []byte) error {
	rec, err := ParseRecord(b)
	if err != nil {
		return err
	}
	*r = *rec
	return nil
}

// MarshalShape writes rec as one line of compact JSON in the given shape,
// without a trailing newline and without HTML escaping.
func MarshalShape(rec *Record, shape RecordShape) ([]byte, error) {
	ts := rec.Timestamp.UTC()
	if y := ts.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("record: timestamp year %d out of range", y)
	}
	var meta map[string]any
	if rec.Meta != nil || len(rec.OtherMetadata) > 0 {
		meta = make(map[string]any, len(rec.OtherMetadata)+1)
		for k, v := range rec.OtherMetadata {
			meta[k] = v
		}
		if rec.Meta != nil {
			meta[MetaKey] = rec.Meta
		}
	}
	var v any
	switch shape {
	case ShapeAgentTrace:
		out := recordOut{
			Version:   rec.Version,
			ID:        rec.ID,
			Timestamp: ts.Format(time.RFC3339Nano),
			VCS:       rec.VCS,
			Tool:      rec.Tool,
			Files:     make([]TraceFile, len(rec.Files)),
			Metadata:  meta,
		}
		for i, f := range rec.Files {
			out.Files[i] = TraceFile{Path: f.Path, Conversations: make([]TraceConversation, len(f.Conversations))}
			for j, c := range f.Conversations {
				if c.Ranges == nil {
					c.Ranges = []Range{}
				}
				out.Files[i].Conversations[j] = c
			}
		}
		v = out
	case ShapeSeed:
		out := seedOut{
			ID:        rec.ID,
			Timestamp: ts.Format(time.RFC3339Nano),
			Files:     make([]seedFile, len(rec.Files)),
			Metadata:  meta,
		}
		if rec.VCS != nil {
			out.VCS = &seedVCS{RevisionID: rec.VCS.Revision}
		}
		for i, f := range rec.Files {
			sf := seedFile{RelativePath: f.Path, Conversations: make([]seedConversation, len(f.Conversations))}
			for j, c := range f.Conversations {
				sc := seedConversation{URL: c.URL, Ranges: c.Ranges}
				if sc.Ranges == nil {
					sc.Ranges = []Range{}
				}
				if c.Contributor != nil {
					sc.Contributor = &seedContributor{EntityType: strings.ToUpper(c.Contributor.Type), ModelIdentifier: c.Contributor.ModelID}
				}
				for _, rel := range c.Related {
					if rel.Type == RelatedIntentType && strings.HasPrefix(rel.URL, IntentURLPrefix) {
						if id, err := url.PathUnescape(strings.TrimPrefix(rel.URL, IntentURLPrefix)); err == nil {
							sc.Related = append(sc.Related, seedRelated{Type: "specification", Value: id})
							continue
						}
					}
					sc.Related = append(sc.Related, seedRelated{Type: rel.Type, Value: rel.URL})
				}
				sf.Conversations[j] = sc
			}
			out.Files[i] = sf
		}
		v = out
	default:
		return nil, fmt.Errorf("record: unknown shape %v", shape)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

type recordOut struct {
	Version   string         `json:"version"`
	ID        string         `json:"id"`
	Timestamp string         `json:"timestamp"`
	VCS       *VCS           `json:"vcs,omitempty"`
	Tool      *TraceTool     `json:"tool,omitempty"`
	Files     []TraceFile    `json:"files"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type seedOut struct {
	ID        string         `json:"id"`
	Timestamp string         `json:"timestamp"`
	VCS       *seedVCS       `json:"vcs,omitempty"`
	Files     []seedFile     `json:"files"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type seedVCS struct {
	RevisionID string `json:"revision_id"`
}

type seedFile struct {
	RelativePath  string             `json:"relative_path"`
	Conversations []seedConversation `json:"conversations"`
}

type seedConversation struct {
	URL         string           `json:"url,omitempty"`
	Contributor *seedContributor `json:"contributor,omitempty"`
	Ranges      []Range          `json:"ranges"`
	Related     []seedRelated    `json:"related,omitempty"`
}

type seedContributor struct {
	EntityType      string `json:"entity_type"`
	ModelIdentifier string `json:"model_identifier,omitempty"`
}

type seedRelated struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// recordIn accepts both shapes field by field.
type recordIn struct {
	Version   *string                    `json:"version"`
	ID        string                     `json:"id"`
	Timestamp string                     `json:"timestamp"`
	VCS       *vcsIn                     `json:"vcs"`
	Tool      *TraceTool                 `json:"tool"`
	Files     *[]fileIn                  `json:"files"`
	Metadata  map[string]json.RawMessage `json:"metadata"`
}

type vcsIn struct {
	Type       string `json:"type"`
	Revision   string `json:"revision"`
	RevisionID string `json:"revision_id"`
}

type fileIn struct {
	Path          string   `json:"path"`
	RelativePath  string   `json:"relative_path"`
	Conversations []convIn `json:"conversations"`
}

type convIn struct {
	URL         string         `json:"url"`
	Contributor *contributorIn `json:"contributor"`
	Ranges      []rangeIn      `json:"ranges"`
	Related     []relatedIn    `json:"related"`
}

type contributorIn struct {
	Type            string `json:"type"`
	ModelID         string `json:"model_id"`
	EntityType      string `json:"entity_type"`
	ModelIdentifier string `json:"model_identifier"`
}

type rangeIn struct {
	StartLine   int            `json:"start_line"`
	EndLine     int            `json:"end_line"`
	ContentHash string         `json:"content_hash"`
	Contributor *contributorIn `json:"contributor"`
}

type relatedIn struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Value string `json:"value"`
}

// ParseRecord reads one record in the Agent Trace 0.1.0 shape or the seed shape
// (vcs.revision_id, relative_path, contributor.entity_type/model_identifier,
// related {type:"specification", value}) and normalizes it: seed fields become
// their Agent Trace equivalents, contributor types are lowercased, a
// specification becomes an intent link, the timestamp is UTC and JSON kept
// verbatim (other metadata, the denial) is compacted. Unknown fields are
// ignored. It requires an id that is a UUID, an RFC 3339 timestamp, files,
// a path for every file and ranges with 1 <= start_line <= end_line; version
// is required unless the record is in the seed shape, which has none.
func ParseRecord(line []byte) (*Record, error) {
	var in recordIn
	if err := json.Unmarshal(line, &in); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	rec := &Record{ID: in.ID, Tool: in.Tool}
	if _, err := uuid.Parse(in.ID); err != nil {
		return nil, fmt.Errorf("record: id %q: %w", in.ID, err)
	}
	ts, err := time.Parse(time.RFC3339, in.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("record: timestamp: %w", err)
	}
	rec.Timestamp = ts.UTC()
	if y := rec.Timestamp.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("record: timestamp year %d out of range", y)
	}
	if in.VCS != nil {
		v := VCS{Type: in.VCS.Type, Revision: in.VCS.Revision}
		if v.Revision == "" && in.VCS.RevisionID != "" {
			v.Revision = in.VCS.RevisionID
		}
		if v.Type == "" {
			v.Type = "git"
		}
		rec.VCS = &v
	}
	if in.Files == nil {
		return nil, errors.New("record: missing files")
	}
	rec.Files = make([]TraceFile, 0, len(*in.Files))
	for _, f := range *in.Files {
		tf := TraceFile{Path: f.Path, Conversations: make([]TraceConversation, 0, len(f.Conversations))}
		if tf.Path == "" && f.RelativePath != "" {
			tf.Path = f.RelativePath
		}
		if tf.Path == "" {
			return nil, errors.New("record: file without a path")
		}
		for _, c := range f.Conversations {
			tc := TraceConversation{URL: c.URL, Ranges: make([]Range, 0, len(c.Ranges))}
			if c.Contributor != nil {
				tc.Contributor = c.Contributor.normalize()
			}
			for _, r := range c.Ranges {
				if r.StartLine < 1 || r.EndLine < r.StartLine {
					return nil, fmt.Errorf("record: %s: invalid range %d-%d", tf.Path, r.StartLine, r.EndLine)
				}
				nr := Range{StartLine: r.StartLine, EndLine: r.EndLine, ContentHash: r.ContentHash}
				if r.Contributor != nil {
					nr.Contributor = r.Contributor.normalize()
				}
				tc.Ranges = append(tc.Ranges, nr)
			}
			for _, rel := range c.Related {
				tr := TraceRelated{Type: rel.Type, URL: rel.URL}
				if tr.URL == "" && rel.Value != "" {
					tr.URL = rel.Value
					if rel.Type == "specification" {
						tr = TraceRelated{Type: RelatedIntentType, URL: IntentURLPrefix + url.PathEscape(rel.Value)}
					}
				}
				tc.Related = append(tc.Related, tr)
			}
			tf.Conversations = append(tf.Conversations, tc)
		}
		rec.Files = append(rec.Files, tf)
	}
	rec.Version = AgentTraceVersion // the seed shape has none
	if in.Version != nil && *in.Version != "" {
		rec.Version = *in.Version
	}
	for k, raw := range in.Metadata {
		if k == MetaKey {
			var m *Meta
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, fmt.Errorf("record: metadata %s: %w", MetaKey, err)
			}
			if m != nil && len(m.Denial) > 0 {
				if string(m.Denial) == "null" {
					m.Denial = nil
				} else if m.Denial, err = recordCompact(m.Denial); err != nil {
					return nil, fmt.Errorf("record: denial: %w", err)
				}
			}
			rec.Meta = m
			continue
		}
		c, err := recordCompact(raw)
		if err != nil {
			return nil, fmt.Errorf("record: metadata %s: %w", k, err)
		}
		if rec.OtherMetadata == nil {
			rec.OtherMetadata = make(map[string]json.RawMessage)
		}
		rec.OtherMetadata[k] = c
	}
	return rec, nil
}

func (c *contributorIn) normalize() *TraceContributor {
	tc := &TraceContributor{Type: c.Type, ModelID: c.ModelID}
	if tc.Type == "" {
		tc.Type = c.EntityType
	}
	if tc.ModelID == "" {
		tc.ModelID = c.ModelIdentifier
	}
	tc.Type = strings.ToLower(tc.Type)
	return tc
}

func recordCompact(raw []byte) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// recordPathOK reports whether p is a clean workspace-relative slash path.
func recordPathOK(p string) bool {
	return p != "" && p != "." && !strings.HasPrefix(p, "/") && path.Clean(p) == p &&
		p != ".." && !strings.HasPrefix(p, "../") && !strings.ContainsRune(p, 0) && utf8.ValidString(p)
}

func recordTruncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
