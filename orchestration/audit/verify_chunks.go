package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"github.com/google/uuid"
	"github.com/intentgate/intentgate/orchestration"
)

// What a verify worker makes of a chunk: per line the chain's facts and
// where the line is in the chunk, and the rare findings with the index of
// their line in the chunk.
type verifyChunk struct {
	lines []chainLine
	at    []uint32 // at[k]: offset of line k in the chunk's data
	notes []lineNote
	drift []driftRef
	recs  []*orchestration.Record // per line, when the caller sees every record
}

type noteKind uint8

const (
	noteParseErr  noteKind = iota // why the line is not a record (chain: unparsable)
	noteBadPrev                   // the prev that is not a link
	noteInvalid                   // why the record is not Agent Trace 0.1.0
	noteRecovered                 // "path: why" of a record written after a crash
)

type lineNote struct {
	k    int
	kind noteKind
	text string
}

// driftRef is a path a change record names; path is a slice of the chunk
// (or a copy, for a record read by ParseRecord).
type driftRef struct {
	k    int
	path []byte
}

// verifyWorker is one worker's state: the canonical view it reads lines into.
type verifyWorker struct {
	view  orchestration.CanonView
	drift bool // note the paths of change records
	recs  bool // keep every record
}

func (w *verifyWorker) chunk(c *lineChunk) *verifyChunk {
	out := &verifyChunk{}
	n := bytes.Count(c.data, []byte{'\n'})
	out.lines = make([]chainLine, n)
	out.at = make([]uint32, n)
	if w.recs {
		out.recs = make([]*orchestration.Record, n)
	}
	k := 0
	c.eachLine(func(at int, _, raw []byte) {
		out.at[k] = uint32(at)
		w.line(out, k, raw)
		k++
	})
	return out
}

func (w *verifyWorker) line(out *verifyChunk, k int, raw []byte) {
	l := &out.lines[k]
	l.sum = sha256.Sum256(raw)
	note := func(kind noteKind, text string) {
		out.notes = append(out.notes, lineNote{k: k, kind: kind, text: text})
	}
	v := &w.view
	if v.Read(raw) {
		// The writer's own bytes: valid when the values the writer copies
		// unchecked are (the schema runs only when they are not).
		l.flags |= chainParsed | chainID
		decodeUUIDText(v.ID, &l.id)
		var rec *orchestration.Record
		if w.recs {
			rec = v.Record()
			out.recs[k] = rec
		}
		if !viewOwnValues(v) {
			if rec == nil {
				rec = v.Record()
			}
			seed, err := ValidateLine(raw, rec)
			if seed {
				l.flags |= chainSeed
			}
			if err != nil {
				note(noteInvalid, err.Error())
			}
		}
		if !v.HasMeta {
			if w.drift && len(v.Files) > 0 {
				for _, f := range v.Files {
					out.drift = append(out.drift, driftRef{k: k, path: f.Path})
				}
			}
			return
		}
		l.flags |= chainMeta
		switch {
		case len(v.Prev) == 0:
			l.flags |= chainPrevEmpty
		case parseLink(v.Prev, &l.prev):
			l.flags |= chainLinked
		default:
			note(noteBadPrev, string(v.Prev))
		}
		if len(v.Recovered) > 0 {
			p := ""
			if len(v.Files) > 0 {
				p = string(v.Files[0].Path)
			}
			note(noteRecovered, p+": "+string(v.Recovered))
		}
		if w.drift && string(v.Decision) != orchestration.DecisionDeny && string(v.Mutation) != orchestration.MutationDenial {
			for _, f := range v.Files {
				out.drift = append(out.drift, driftRef{k: k, path: f.Path})
			}
		}
		return
	}
	rec, err := orchestration.ParseRecord(raw)
	if err != nil {
		note(noteParseErr, err.Error())
		return
	}
	l.flags |= chainParsed
	if w.recs {
		out.recs[k] = rec
	}
	if id, err := uuid.Parse(rec.ID); err == nil {
		l.flags |= chainID
		l.id = id
	}
	if !ownRecordValid(raw, rec) {
		seed, err := ValidateLine(raw, rec)
		if seed {
			l.flags |= chainSeed
		}
		if err != nil {
			note(noteInvalid, err.Error())
		}
	}
	if w.drift && isChange(rec) {
		for _, f := range rec.Files {
			out.drift = append(out.drift, driftRef{k: k, path: []byte(f.Path)})
		}
	}
	if rec.Meta == nil {
		return
	}
	l.flags |= chainMeta
	switch {
	case rec.Meta.Prev == "":
		l.flags |= chainPrevEmpty
	case parseLink([]byte(rec.Meta.Prev), &l.prev):
		l.flags |= chainLinked
	default:
		note(noteBadPrev, rec.Meta.Prev)
	}
	if rec.Meta.Recovered != "" {
		p := ""
		if len(rec.Files) > 0 {
			p = rec.Files[0].Path
		}
		note(noteRecovered, p+": "+rec.Meta.Recovered)
	}
}

// decodeUUIDText decodes the 36-character text form CanonView.Read checked.
func decodeUUIDText(s []byte, id *[16]byte) {
	_ = s[35]
	for j, i := range uuidDigitAt {
		id[j] = hexVal[s[i]]<<4 | hexVal[s[i+1]]
	}
}

// uuidDigitAt is where each byte's two hex digits start in a UUID's text
// (8-4-4-4-12 digits, hyphens between).
var uuidDigitAt = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexVal is the value of a hex digit (either case); 0 for other bytes.
var hexVal = func() (t [256]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return
}()

// viewOwnValues is ownRecordValues for a record read by CanonView.
func viewOwnValues(v *orchestration.CanonView) bool {
	if !v.HasTool || string(v.ToolName) != "intentgate" || len(v.ToolVersion) == 0 || !v.HasMeta || !idForm(string(v.ID)) {
		return false
	}
	if v.HasVCS {
		switch string(v.VCSType) {
		case "git", "jj", "hg", "svn":
		default:
			return false
		}
	}
	for _, f := range v.Files {
		if len(f.Path) == 0 {
			return false
		}
	}
	for _, c := range v.Convs {
		if len(c.URL) > 0 && !absURIBytes(c.URL) {
			return false
		}
		if c.HasContributor && (!contributorType(string(c.ContribType)) || len(c.ModelID) > 250) {
			return false
		}
	}
	for _, r := range v.Related {
		if len(r.Type) == 0 || !absURIBytes(r.URL) {
			return false
		}
	}
	for _, r := range v.Ranges {
		if r.StartLine < 1 || r.EndLine < 1 {
			return false
		}
	}
	return true
}

// absURIBytes is absURI, answering the common shapes (scheme:opaque and
// scheme://host/path with only unreserved characters) without url.Parse;
// anything else goes to absURI itself.
func absURIBytes(s []byte) bool {
	if plainAbsURI(s) {
		return true
	}
	return absURI(string(s))
}

// plainAbsURI says yes only to URIs url.Parse takes as absolute for sure:
// a scheme, then either an opaque part or "//" a host of letters, digits,
// dots and hyphens, then a path; every character unreserved or "/" (":" in
// the opaque part too). FuzzPlainAbsURI holds it to url.Parse.
func plainAbsURI(s []byte) bool {
	i := 0
	for i < len(s) && (isAlpha(s[i]) || i > 0 && (isDigit(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')) {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return false
	}
	rest := s[i+1:]
	if len(rest) >= 2 && rest[0] == '/' && rest[1] == '/' {
		h := 2
		for h < len(rest) && rest[h] != '/' {
			if c := rest[h]; !isAlpha(c) && !isDigit(c) && c != '-' && c != '.' {
				return false
			}
			h++
		}
		if h == 2 {
			return false
		}
		rest = rest[h:]
	}
	for _, c := range rest {
		if !isAlpha(c) && !isDigit(c) && c != '-' && c != '.' && c != '_' && c != '~' && c != '/' && c != ':' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// lastLink is the chain link naming a line whose hash is sum.
func lastLink(sum [32]byte) string {
	return orchestration.HashPrefix + hex.EncodeToString(sum[:])
}
