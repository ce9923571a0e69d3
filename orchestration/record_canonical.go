package orchestration

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"time"
	"unicode/utf8"
)

// ParseCanonical is the fast reader of the lines intentgate's own writer
// makes. It reads a line only when the line is exactly what MarshalShape
// (ShapeAgentTrace) writes for the record it denotes: keys in the writer's
// order, no whitespace, strings without escapes, the metadata holding only
// dev.intentgate, no per-range contributor. For such a line it returns the
// record ParseRecord would return, and MarshalShape of that record is the
// line again (FuzzParseCanonical holds it to both). Any other line, valid
// or not, returns false and is left to ParseRecord: it never says no to a
// record, only "not mine to read fast".
func ParseCanonical(line []byte) (*Record, bool) {
	var v CanonView
	if !v.Read(line) {
		return nil, false
	}
	return v.Record(), true
}

// CanonView is a canonical line read in place: every field a slice of the
// line's bytes, nothing copied. Read accepts exactly the lines ParseCanonical
// accepts (ParseCanonical is Read and Record), so a reader that needs only a
// few fields of a million lines (trace stats, verify) pays for no strings.
// A CanonView is reused from line to line: its slices of files,
// conversations, ranges and related resources keep their capacity.
type CanonView struct {
	Version, ID, Timestamp []byte
	HasVCS                 bool
	VCSType, VCSRevision   []byte
	HasTool                bool
	ToolName, ToolVersion  []byte
	Files                  []CanonFile
	Convs                  []CanonConv
	Ranges                 []CanonRange
	Related                []CanonRelated
	// HasMeta: the record has dev.intentgate metadata; the fields below
	// hold it.
	HasMeta                            bool
	Intent, Session, CallID, Tool      []byte
	Command, Agent, Mutation, Decision []byte
	BeforeSHA256, AfterSHA256          []byte
	DeletedLines                       int
	Denial                             []byte // a compact JSON object, or nil
	Recovered, Prev                    []byte
}

// CanonFile is a file of a CanonView: its conversations are
// Convs[ConvFrom:ConvTo].
type CanonFile struct {
	Path             []byte
	ConvFrom, ConvTo int
}

// CanonConv is a conversation: its ranges are Ranges[RangeFrom:RangeTo],
// its related resources Related[RelFrom:RelTo].
type CanonConv struct {
	URL                []byte
	HasContributor     bool
	ContribType        []byte
	ModelID            []byte
	RangeFrom, RangeTo int
	RelFrom, RelTo     int
}

// CanonRange is a range of a conversation.
type CanonRange struct {
	StartLine, EndLine int
	ContentHash        []byte
}

// CanonRelated is a related resource of a conversation.
type CanonRelated struct {
	Type, URL []byte
}

// Read reads line into v, reporting whether it is a canonical line. On false
// v holds nothing of use.
func (v *CanonView) Read(line []byte) bool {
	p := canonParser{b: line, v: v}
	p.record()
	return p.ok && p.i == len(p.b)
}

// Record builds the record the view holds (the one ParseRecord returns).
func (v *CanonView) Record() *Record {
	rec := &Record{Version: string(v.Version), ID: string(v.ID), Timestamp: v.Time()}
	if v.HasVCS {
		rec.VCS = &VCS{Type: string(v.VCSType), Revision: string(v.VCSRevision)}
	}
	if v.HasTool {
		rec.Tool = &TraceTool{Name: string(v.ToolName), Version: string(v.ToolVersion)}
	}
	rec.Files = make([]TraceFile, 0, len(v.Files))
	for _, f := range v.Files {
		tf := TraceFile{Path: string(f.Path), Conversations: make([]TraceConversation, 0, f.ConvTo-f.ConvFrom)}
		for _, c := range v.Convs[f.ConvFrom:f.ConvTo] {
			tc := TraceConversation{URL: string(c.URL), Ranges: make([]Range, 0, c.RangeTo-c.RangeFrom)}
			if c.HasContributor {
				tc.Contributor = &TraceContributor{Type: string(c.ContribType), ModelID: string(c.ModelID)}
			}
			for _, r := range v.Ranges[c.RangeFrom:c.RangeTo] {
				tc.Ranges = append(tc.Ranges, Range{StartLine: r.StartLine, EndLine: r.EndLine, ContentHash: string(r.ContentHash)})
			}
			for _, r := range v.Related[c.RelFrom:c.RelTo] {
				tc.Related = append(tc.Related, TraceRelated{Type: string(r.Type), URL: string(r.URL)})
			}
			tf.Conversations = append(tf.Conversations, tc)
		}
		rec.Files = append(rec.Files, tf)
	}
	if v.HasMeta {
		rec.Meta = &Meta{Intent: string(v.Intent), Session: string(v.Session), CallID: string(v.CallID), Tool: string(v.Tool),
			Command: string(v.Command), Agent: string(v.Agent), Mutation: string(v.Mutation), Decision: string(v.Decision),
			BeforeSHA256: string(v.BeforeSHA256), AfterSHA256: string(v.AfterSHA256), DeletedLines: v.DeletedLines,
			Recovered: string(v.Recovered), Prev: string(v.Prev)}
		if v.Denial != nil {
			rec.Meta.Denial = json.RawMessage(append([]byte(nil), v.Denial...))
		}
	}
	return rec
}

// Time is the record's timestamp (in UTC), from the digits Read checked.
func (v *CanonView) Time() time.Time {
	ts := v.Timestamp
	if len(ts) < 20 {
		return time.Time{}
	}
	d := func(i, n int) int {
		x := 0
		for _, c := range ts[i : i+n] {
			x = x*10 + int(c-'0')
		}
		return x
	}
	nsec := 0
	if len(ts) > 21 {
		frac := ts[20 : len(ts)-1]
		nsec = d(20, len(frac))
		for range 9 - len(frac) {
			nsec *= 10
		}
	}
	return time.Date(d(0, 4), time.Month(d(5, 2)), d(8, 2), d(11, 2), d(14, 2), d(17, 2), nsec, time.UTC)
}

type canonParser struct {
	b  []byte
	i  int
	ok bool
	v  *CanonView
}

func (p *canonParser) fail() { p.ok = false }

// lit consumes s, or fails.
func (p *canonParser) lit(s string) bool {
	if !p.ok || len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		p.ok = false
		return false
	}
	p.i += len(s)
	return true
}

// peek reports whether s comes next, without consuming it.
func (p *canonParser) peek(s string) bool {
	return p.ok && len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s
}

// skip consumes s when it comes next, reporting whether it did.
func (p *canonParser) skip(s string) bool {
	if p.peek(s) {
		p.i += len(s)
		return true
	}
	return false
}

// str reads a string as the encoder writes one that needs no escape: no
// backslash, no control character, valid UTF-8 and no U+2028 or U+2029
// (which the encoder escapes). The result is never nil when p.ok.
func (p *canonParser) str() []byte {
	b, i := p.b, p.i
	if !p.ok || i >= len(b) || b[i] != '"' {
		p.ok = false
		return nil
	}
	i++
	start := i
	for {
		// Eight bytes at a time while none is special (a quote, a
		// backslash, a control character or a byte of a multi-byte
		// character); the lowest flagged byte is the first special one.
		r := b[i:] // a slice of its own: no bounds checks in the loop
		for len(r) >= 8 {
			if m := swarSpecial(binary.LittleEndian.Uint64(r)); m != 0 {
				i = len(b) - len(r) + bits.TrailingZeros64(m)>>3
				goto special
			}
			r = r[8:]
		}
		i = len(b) - len(r)
		for i < len(b) && b[i] >= 0x20 && b[i] < utf8.RuneSelf && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i == len(b) {
			p.fail()
			return nil
		}
	special:
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			return b[start:i:i]
		case c < utf8.RuneSelf: // a backslash or a control character
			p.fail()
			return nil
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				p.fail()
				return nil
			}
			i += n
		}
	}
}

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// swarSpecial flags (sets the high bit of) every byte of x that may not
// stand unescaped in a string: a byte >= 0x80, a control character, a quote
// or a backslash. A byte above a flagged one may be flagged wrongly (a
// borrow runs upwards from a flagged byte only), so the lowest flag is
// always right.
func swarSpecial(x uint64) uint64 {
	return (x | (x - swarOnes*0x20) | ((x ^ swarOnes*'"') - swarOnes) | ((x ^ swarOnes*'\\') - swarOnes)) & swarHigh
}

// strN is str for a string the writer makes n bytes long as a rule (an id,
// a hash): when the byte n on is a quote and none of the n before it is
// special, those n bytes are the string, found with a fixed run of word
// reads and no branch on where the string ends (a branch str, at the end
// of each string, often mispredicts); otherwise str reads it. Either way
// the result is str's.
func (p *canonParser) strN(n int) []byte {
	b, i := p.b, p.i
	if p.ok && n <= len(b)-i-2 && b[i] == '"' && b[i+1+n] == '"' && plainBytes(b[i+1:i+1+n]) {
		p.i = i + 2 + n
		return b[i+1 : i+1+n : i+1+n]
	}
	return p.str()
}

// plainBytes reports whether every byte of s may stand unescaped in a
// string and needs no second look: printable ASCII other than a quote and
// a backslash. It ORs swarSpecial of every eight bytes (the last eight
// read whole, again in part) and tests once: a word with a special byte
// flags at least that byte, a word without flags nothing. plainBytesSlow
// is the same a byte at a time, and FuzzPlainBytes holds the two together.
func plainBytes(s []byte) bool {
	if len(s) < 8 {
		return plainBytesSlow(s)
	}
	acc := swarSpecial(binary.LittleEndian.Uint64(s[len(s)-8:]))
	for r := s; len(r) >= 8; r = r[8:] {
		acc |= swarSpecial(binary.LittleEndian.Uint64(r))
	}
	return acc == 0
}

// plainBytesSlow is plainBytes a byte at a time.
func plainBytesSlow(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// nonEmpty reads a string that must not be empty.
func (p *canonParser) nonEmpty() []byte {
	s := p.str()
	if len(s) == 0 {
		p.fail()
	}
	return s
}

// opt reads `,"key":` and a non-empty string when they come next; n > 0
// is the string's usual length (see strN).
func (p *canonParser) opt(key string, n int) []byte {
	if p.ok && len(p.b)-p.i >= len(key)+4 && p.b[p.i] == ',' && p.b[p.i+1] == '"' &&
		string(p.b[p.i+2:p.i+2+len(key)]) == key && p.b[p.i+2+len(key)] == '"' && p.b[p.i+3+len(key)] == ':' {
		p.i += len(key) + 4
		var s []byte
		if n > 0 {
			s = p.strN(n)
		} else {
			s = p.str()
		}
		if len(s) == 0 {
			p.fail()
		}
		return s
	}
	return nil
}

// The usual lengths of the strings strN reads: a UUID, a git commit, a
// SHA-256 in hex and with its "sha256:" prefix.
const (
	uuidLen      = 36
	revisionLen  = 40
	sha256Len    = 64
	sha256RefLen = len("sha256:") + sha256Len
)

// num reads an integer as the encoder writes it.
func (p *canonParser) num() int {
	if !p.ok {
		return 0
	}
	start, neg := p.i, false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	d := p.i
	v := 0
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		if p.i-d >= 18 { // beyond what fits without care
			p.fail()
			return 0
		}
		v = v*10 + int(p.b[p.i]-'0')
		p.i++
	}
	n := p.i - d
	if n == 0 || (n > 1 && p.b[d] == '0') || (neg && v == 0) {
		p.i = start
		p.fail()
		return 0
	}
	if neg {
		v = -v
	}
	return v
}

func (p *canonParser) record() {
	p.ok = true
	v := p.v
	*v = CanonView{Files: v.Files[:0], Convs: v.Convs[:0], Ranges: v.Ranges[:0], Related: v.Related[:0]}
	p.lit(`{"version":`)
	v.Version = p.nonEmpty()
	p.lit(`,"id":`)
	v.ID = p.strN(uuidLen)
	if !uuidText(v.ID) {
		p.fail()
	}
	p.lit(`,"timestamp":`)
	v.Timestamp = p.str()
	if !p.ok || !canonTimestamp(v.Timestamp) {
		p.fail()
		return
	}
	if p.skip(`,"vcs":`) {
		p.lit(`{"type":`)
		v.HasVCS = true
		v.VCSType = p.nonEmpty()
		p.lit(`,"revision":`)
		v.VCSRevision = p.strN(revisionLen)
		p.lit(`}`)
	}
	if p.skip(`,"tool":`) {
		p.lit(`{"name":`)
		v.HasTool = true
		v.ToolName = p.str()
		p.lit(`,"version":`)
		v.ToolVersion = p.str()
		p.lit(`}`)
	}
	p.lit(`,"files":[`)
	for p.ok && !p.peek(`]`) {
		if len(v.Files) > 0 {
			p.lit(`,`)
		}
		p.file()
	}
	p.lit(`]`)
	if p.skip(`,"metadata":`) {
		p.lit(`{"` + MetaKey + `":`)
		p.meta()
		p.lit(`}`)
	}
	p.lit(`}`)
}

func (p *canonParser) file() {
	v := p.v
	p.lit(`{"path":`)
	f := CanonFile{Path: p.nonEmpty(), ConvFrom: len(v.Convs)}
	p.lit(`,"conversations":[`)
	for p.ok && !p.peek(`]`) {
		if len(v.Convs) > f.ConvFrom {
			p.lit(`,`)
		}
		p.conversation()
	}
	p.lit(`]}`)
	f.ConvTo = len(v.Convs)
	v.Files = append(v.Files, f)
}

func (p *canonParser) conversation() {
	v := p.v
	var c CanonConv
	p.lit(`{`)
	more := false // a key came before: the next one follows a comma
	if p.skip(`"url":`) {
		c.URL = p.nonEmpty()
		more = true
	}
	if more && p.skip(`,"contributor":`) || !more && p.skip(`"contributor":`) {
		p.lit(`{"type":`)
		c.HasContributor = true
		c.ContribType = p.str()
		switch string(c.ContribType) { // ParseRecord lowercases; these are the lowercase values
		case "human", "ai", "mixed", "unknown":
		default:
			p.fail()
		}
		c.ModelID = p.opt("model_id", 0)
		p.lit(`}`)
		more = true
	}
	if more {
		p.lit(`,`)
	}
	p.lit(`"ranges":[`)
	c.RangeFrom = len(v.Ranges)
	for p.ok && !p.peek(`]`) {
		if len(v.Ranges) > c.RangeFrom {
			p.lit(`,`)
		}
		var r CanonRange
		p.lit(`{"start_line":`)
		r.StartLine = p.num()
		p.lit(`,"end_line":`)
		r.EndLine = p.num()
		if r.StartLine < 1 || r.EndLine < r.StartLine {
			p.fail()
		}
		r.ContentHash = p.opt("content_hash", sha256RefLen)
		p.lit(`}`)
		v.Ranges = append(v.Ranges, r)
	}
	c.RangeTo = len(v.Ranges)
	p.lit(`]`)
	c.RelFrom = len(v.Related)
	if p.skip(`,"related":[`) {
		for p.ok && !p.peek(`]`) {
			if len(v.Related) > c.RelFrom {
				p.lit(`,`)
			}
			p.lit(`{"type":`)
			r := CanonRelated{Type: p.str()}
			p.lit(`,"url":`)
			r.URL = p.str()
			p.lit(`}`)
			v.Related = append(v.Related, r)
		}
		p.lit(`]`)
		if len(v.Related) == c.RelFrom { // the writer omits an empty list
			p.fail()
		}
	}
	c.RelTo = len(v.Related)
	p.lit(`}`)
	v.Convs = append(v.Convs, c)
}

func (p *canonParser) meta() {
	v := p.v
	v.HasMeta = true
	p.lit(`{"intent":`)
	v.Intent = p.str()
	p.lit(`,"session":`)
	v.Session = p.str()
	p.lit(`,"call_id":`)
	v.CallID = p.str()
	p.lit(`,"tool":`)
	v.Tool = p.str()
	v.Command = p.opt("command", 0)
	v.Agent = p.opt("agent", 0)
	p.lit(`,"mutation":`)
	v.Mutation = p.str()
	p.lit(`,"decision":`)
	v.Decision = p.str()
	v.BeforeSHA256 = p.opt("before_sha256", sha256Len)
	v.AfterSHA256 = p.opt("after_sha256", sha256Len)
	if p.skip(`,"deleted_lines":`) {
		if v.DeletedLines = p.num(); v.DeletedLines == 0 {
			p.fail()
		}
	}
	if p.skip(`,"denial":`) {
		v.Denial = p.compactObject()
	}
	v.Recovered = p.opt("recovered", 0)
	p.lit(`,"prev":`)
	v.Prev = p.strN(sha256RefLen)
	p.lit(`}`)
}

// compactObject reads a JSON object with no whitespace between its tokens
// and no escapes in its strings (what the encoder writes of a compacted
// denial), checking its grammar as it goes, and returns its bytes. An
// object nested deeper than compactDepth is not read fast: ParseRecord
// judges it (encoding/json has its own limit on nesting, counted over the
// whole line).
func (p *canonParser) compactObject() []byte {
	start := p.i
	if !p.ok || p.i >= len(p.b) || p.b[p.i] != '{' || !p.jsonValue(0) {
		p.fail()
		return nil
	}
	return p.b[start:p.i:p.i]
}

// compactDepth bounds the nesting of a denial read fast (its own braces
// included); the writer's denials nest two deep.
const compactDepth = 32

// jsonValue reads one compact JSON value, reporting whether it is one
// (and nests no deeper than compactDepth).
func (p *canonParser) jsonValue(depth int) bool {
	b := p.b
	if p.i >= len(b) {
		return false
	}
	switch c := b[p.i]; {
	case c == '"':
		return p.str() != nil
	case c == '{' || c == '[':
		if depth >= compactDepth {
			return false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		if p.i < len(b) && b[p.i] == end {
			p.i++
			return true
		}
		for {
			if c == '{' {
				if p.str() == nil || p.i >= len(b) || b[p.i] != ':' {
					return false
				}
				p.i++
			}
			if !p.jsonValue(depth+1) || p.i >= len(b) {
				return false
			}
			switch b[p.i] {
			case ',':
				p.i++
			case end:
				p.i++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return p.word("true")
	case c == 'f':
		return p.word("false")
	case c == 'n':
		return p.word("null")
	default:
		return p.jsonNumber()
	}
}

// word consumes s when it comes next.
func (p *canonParser) word(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// jsonNumber reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *canonParser) jsonNumber() bool {
	b, i := p.b, p.i
	digits := func() int {
		from := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - from
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	p.i = i
	return true
}

// uuidText reports whether s is a UUID in its 36-character text form.
func uuidText(s []byte) bool {
	if len(s) != 36 {
		return false
	}
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	var bad byte
	for _, part := range [5][]byte{s[0:8], s[9:13], s[14:18], s[19:23], s[24:36]} {
		for _, c := range part {
			bad |= hexDigit[c]
		}
	}
	return bad == 0
}

// hexDigit[c] is 0 for a hexadecimal digit, 1 otherwise.
var hexDigit = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			t[c] = 1
		}
	}
	return t
}()

// notDigit[c] is 0 for a decimal digit, 1 otherwise.
var notDigit = func() (t [256]byte) {
	for c := range t {
		if c < '0' || c > '9' {
			t[c] = 1
		}
	}
	return t
}()

// canonTimestamp reports whether ts is what the writer makes of a UTC time:
// exactly the strings s for which time.Parse(time.RFC3339, s) succeeds with
// a year in 0-9999 and the result's UTC().Format(time.RFC3339Nano) is s
// again ("2006-01-02T15:04:05Z", a fraction of 1-9 digits without a
// trailing zero before the Z). canonTimestampSlow is that definition, and
// FuzzCanonTimestamp holds the two together.
func canonTimestamp(ts []byte) bool {
	n := len(ts)
	if n < 20 || n == 21 || n > 30 || ts[n-1] != 'Z' {
		return false
	}
	if ts[4] != '-' || ts[7] != '-' || ts[10] != 'T' || ts[13] != ':' || ts[16] != ':' || n > 20 && ts[19] != '.' {
		return false
	}
	var bad byte
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		bad |= notDigit[ts[i]]
	}
	if n > 21 {
		for _, c := range ts[20 : n-1] {
			bad |= notDigit[c]
		}
	}
	if bad != 0 {
		return false
	}
	d := func(i int) int { return int(ts[i] - '0') }
	year := d(0)*1000 + d(1)*100 + d(2)*10 + d(3)
	month := d(5)*10 + d(6)
	day := d(8)*10 + d(9)
	hour := d(11)*10 + d(12)
	minute := d(14)*10 + d(15)
	sec := d(17)*10 + d(18)
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return false
	}
	mdays := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		mdays = 29
	}
	if day > mdays {
		return false
	}
	if n == 20 {
		return true
	}
	return ts[n-2] != '0' // the writer drops a fraction's trailing zeros
}
