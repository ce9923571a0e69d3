package orchestration

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/intentgate/intentgate/internal/fsx"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// intentsStatuses lists the valid statuses in lifecycle order, for messages.
const intentsStatuses = "PENDING, IN_PROGRESS, BLOCKED, COMPLETED, ABANDONED"

const intentsFields = "id, name, status, owned_scope, constraints, acceptance_criteria"

func intentsValidStatus(st Status) bool {
	switch st {
	case StatusPending, StatusInProgress, StatusBlocked, StatusCompleted, StatusAbandoned:
		return true
	}
	return false
}

// IntentSet is one successfully loaded version of active_intents.yaml.
// Treat it as read-only: an IntentStore hands the same set to every caller.
type IntentSet struct {
	File    string
	Intents []Intent

	index map[string]int
}

// Get returns the intent with the given id. The id is compared after NFC
// normalization, like the ids in the file.
func (s *IntentSet) Get(id string) (*Intent, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := s.index[norm.NFC.String(id)]
	if !ok {
		return nil, false
	}
	return &s.Intents[i], true
}

// IDs returns the intent ids in file order.
func (s *IntentSet) IDs() []string {
	if s == nil {
		return nil
	}
	ids := make([]string, len(s.Intents))
	for i := range s.Intents {
		ids[i] = s.Intents[i].ID
	}
	return ids
}

// Owns reports whether rel is inside the intent's owned_scope and which glob
// matched. rel must already be canonical (workspace-relative, slash-separated,
// symlinks resolved): matching raw input would let "src/../x" match "src/**".
// Input that is visibly not canonical is an error, and callers deny on error.
func (in *Intent) Owns(rel string) (bool, string, error) {
	if in == nil {
		return false, "", errors.New("owns: nil intent")
	}
	rel = norm.NFC.String(rel)
	if msg := intentsRelProblem(rel); msg != "" {
		return false, "", fmt.Errorf("owns: path %q %s", rel, msg)
	}
	for _, g := range in.OwnedScope {
		g = norm.NFC.String(g)
		ok, err := doublestar.Match(g, rel)
		if err != nil {
			return false, g, fmt.Errorf("owns: match %q against glob %q of %s: %w", rel, g, in.ID, err)
		}
		if ok {
			return true, g, nil
		}
	}
	return false, "", nil
}

// intentsRelProblem says why rel cannot be a canonical workspace-relative
// path, or returns "".
func intentsRelProblem(rel string) string {
	switch {
	case rel == "":
		return "is empty"
	case strings.ContainsRune(rel, 0):
		return "contains a NUL byte"
	case strings.ContainsRune(rel, '\\'):
		return "contains a backslash"
	case strings.HasPrefix(rel, "/") || intentsHasVolume(rel):
		return "is absolute"
	}
	for _, seg := range strings.Split(rel, "/") {
		switch seg {
		case "..", ".", "":
			return "is not canonical"
		}
	}
	return ""
}

func intentsHasVolume(s string) bool {
	return len(s) >= 2 && s[1] == ':' && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}

// IntentsError is one problem in an intents file, with its position.
type IntentsError = yamlPos

// IntentsErrors is every problem found in one intents file, in file order, so
// that a person can fix them all in one edit. errors.As finds an individual
// *IntentsError in it.
type IntentsErrors = yamlErrors

// LoadIntents reads and strictly parses the intents file at path. A read
// error is returned as is (errors.Is(err, fs.ErrNotExist) works); a bad file
// yields IntentsErrors naming path.
func LoadIntents(path string) (*IntentSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseIntents(path, data)
}

// ParseIntents strictly parses the contents of an intents file. file is used
// in error messages only. On any problem it returns IntentsErrors listing all
// of them, each with line and column.
func ParseIntents(file string, data []byte) (set *IntentSet, err error) {
	p := &intentsParser{yamlParser{file: file}}
	defer func() {
		// The YAML library has panicked on malformed input before
		// (CVE-2022-28948); a bad file must read as an error, never crash a hook.
		if r := recover(); r != nil {
			set = nil
			err = IntentsErrors{{File: file, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}}
		}
	}()
	doc := p.document(data)
	if doc != nil {
		set = p.intents(doc)
	}
	if len(p.errs) > 0 {
		return nil, p.sorted()
	}
	return set, nil
}

type intentsParser struct {
	yamlParser
}

// document decodes the single YAML document of the file and returns its root
// node, or nil after recording why there is none.
func (p *intentsParser) document(data []byte) *yaml.Node {
	root, ok := p.decode(data)
	if root == nil && ok {
		p.at(1, 1, "file is empty: expected the top-level key active_intents (write \"active_intents: []\" for no intents)")
	}
	return root
}

func (p *intentsParser) intents(root *yaml.Node) *IntentSet {
	if root.Kind == yaml.AliasNode {
		p.errorf(root, "YAML aliases are not supported")
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "expected a mapping with the key active_intents at the top level, got %s", intentsDescribe(root))
		return nil
	}
	var list *yaml.Node
	p.pairs(root, " at the top level", func(key string, k, v *yaml.Node) {
		if key != "active_intents" {
			p.errorf(k, "unknown top-level field %q (known fields: active_intents)", key)
			return
		}
		list = v
	})
	if list == nil {
		p.errorf(root, "missing top-level key active_intents (write \"active_intents: []\" for no intents)")
		return nil
	}
	set := &IntentSet{File: p.file, index: make(map[string]int)}
	switch {
	case list.Kind == yaml.AliasNode:
		p.errorf(list, "YAML aliases are not supported")
		return nil
	case list.Kind == yaml.ScalarNode && list.ShortTag() == "!!null":
		// "active_intents:" with nothing after it: no intents, like [].
		return set
	case list.Kind != yaml.SequenceNode:
		p.errorf(list, "active_intents must be a list of intents, got %s", intentsDescribe(list))
		return nil
	}
	firstLine := make(map[string]int)
	for i, item := range list.Content {
		in, idNode, ok := p.intent(item, i)
		if idNode != nil {
			if first, dup := firstLine[in.ID]; dup {
				p.errorf(idNode, "duplicate id %q (first defined at line %d)", in.ID, first)
				ok = false
			} else {
				firstLine[in.ID] = idNode.Line
			}
		}
		if ok {
			set.index[in.ID] = len(set.Intents)
			set.Intents = append(set.Intents, in)
		}
	}
	return set
}

// intent decodes one list item. It returns the id node whenever the id itself
// is valid, so that duplicates are found even in otherwise broken intents.
func (p *intentsParser) intent(n *yaml.Node, i int) (Intent, *yaml.Node, bool) {
	in := Intent{Line: n.Line}
	label := fmt.Sprintf("intent #%d", i+1)
	if n.Kind == yaml.AliasNode {
		p.errorf(n, "%s: YAML aliases are not supported", label)
		return in, nil, false
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping with the fields %s, got %s", label, intentsFields, intentsDescribe(n))
		return in, nil, false
	}

	// Find the id first so that every other message can name the intent.
	var idKey, idNode *yaml.Node
	for j := 0; j+1 < len(n.Content); j += 2 {
		if k := n.Content[j]; k.Kind == yaml.ScalarNode && k.Value == "id" && k.ShortTag() == "!!str" {
			idKey, idNode = k, n.Content[j+1]
			break
		}
	}
	errs := len(p.errs)
	if idNode != nil {
		if id, ok := p.str(idKey, idNode, "id", label); ok {
			id = norm.NFC.String(id)
			if strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
				p.errorf(idNode, "id %q in %s contains whitespace or control characters", id, label)
			} else {
				in.ID = id
				label = "intent " + id
			}
		}
	}

	seen := make(map[string]bool)
	where := " in " + label
	p.pairs(n, where, func(key string, k, v *yaml.Node) {
		seen[key] = true
		switch key {
		case "id":
			// Decoded above.
		case "name":
			in.Name, _ = p.str(k, v, key, label)
		case "status":
			if s, ok := p.str(k, v, key, label); ok {
				if st := Status(s); intentsValidStatus(st) {
					in.Status = st
				} else {
					p.errorf(v, "unknown status %q in %s (allowed: %s)", s, label, intentsStatuses)
				}
			}
		case "owned_scope":
			globs, ok := p.strs(k, v, key, label)
			if ok && len(globs) == 0 {
				p.errorf(intentsWhere(k, v), "empty owned_scope in %s: list at least one glob", label)
				break
			}
			for j, g := range globs {
				if g == "" {
					continue // already reported
				}
				g = norm.NFC.String(g)
				if msg := intentsGlobProblem(g); msg != "" {
					p.errorf(v.Content[j], "%s in owned_scope of %s", msg, label)
				}
				globs[j] = g
			}
			in.OwnedScope = globs
		case "constraints":
			in.Constraints, _ = p.strs(k, v, key, label)
		case "acceptance_criteria":
			in.AcceptanceCriteria, _ = p.strs(k, v, key, label)
		default:
			p.errorf(k, "unknown field %q%s (known fields: %s)", key, where, intentsFields)
		}
	})
	for _, f := range []string{"id", "name", "status", "owned_scope"} {
		if !seen[f] {
			p.errorf(n, "missing field %q%s", f, where)
		}
	}
	var ok bool
	if in.ID == "" {
		idNode = nil
	} else {
		ok = len(p.errs) == errs
	}
	return in, idNode, ok
}

// strs decodes a list of non-empty strings; null counts as an empty list.
// When some entries are bad it still returns the list, with "" for each of
// them, so that the good ones can be checked further.
func (p *intentsParser) strs(k, v *yaml.Node, field, label string) ([]string, bool) {
	switch {
	case v.Kind == yaml.AliasNode:
		p.errorf(v, "%s in %s: YAML aliases are not supported", field, label)
		return nil, false
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
		return nil, true
	case v.Kind != yaml.SequenceNode:
		p.errorf(v, "%s in %s must be a list of strings, got %s", field, label, intentsDescribe(v))
		return nil, false
	}
	out := make([]string, 0, len(v.Content))
	ok := true
	for _, item := range v.Content {
		s, good := p.str(item, item, "entry of "+field, label)
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// intentsWhere picks the node to report a problem with v at: its key when v
// was omitted altogether.
func intentsWhere(k, v *yaml.Node) *yaml.Node {
	if k != nil && v.Kind == yaml.ScalarNode && v.Value == "" && v.ShortTag() == "!!null" && v.Style == 0 {
		return k
	}
	return v
}

// intentsDescribe names a node's YAML type for messages.
func intentsDescribe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		case "!!null":
			return "null"
		case "!!merge":
			return "a merge key (<<), which is not supported"
		case "!!timestamp":
			return "the timestamp " + n.Value
		default:
			return fmt.Sprintf("a value tagged %s", n.ShortTag())
		}
	}
	return "an unexpected YAML node"
}

// intentsGlobProblem says what is wrong with an owned_scope glob, or returns
// "". Globs are matched against canonical paths only, so a glob that could
// never match one is a mistake worth reporting rather than a silent no-op.
func intentsGlobProblem(g string) string {
	switch {
	case g == "":
		return "empty glob"
	case strings.ContainsRune(g, '\\'):
		return fmt.Sprintf("glob %q contains a backslash (use forward slashes)", g)
	case strings.HasPrefix(g, "/") || intentsHasVolume(g):
		return fmt.Sprintf("glob %q is absolute (write it relative to the workspace root)", g)
	case !doublestar.ValidatePattern(g):
		return fmt.Sprintf("invalid glob %q", g)
	}
	segs := strings.Split(g, "/")
	for i, seg := range segs {
		// Alternatives like "{..,src}" hide a ".." inside one segment.
		for _, alt := range strings.FieldsFunc(seg, func(r rune) bool { return r == '{' || r == '}' || r == ',' }) {
			if alt == ".." {
				return fmt.Sprintf("glob %q contains a \"..\" segment", g)
			}
		}
		switch {
		case seg == ".":
			return fmt.Sprintf("glob %q contains a \".\" segment, which never matches a canonical path", g)
		case seg == "" && i == len(segs)-1:
			return fmt.Sprintf("glob %q ends with a slash (write %q to own a directory)", g, g+"**")
		case seg == "":
			return fmt.Sprintf("glob %q contains an empty segment \"//\", which never matches a canonical path", g)
		}
	}
	return ""
}

// SetIntentStatus changes the status of intent id in the intents file at
// path. Only the status value changes: the edit is located through the YAML
// node tree and spliced into the original bytes, so comments, ordering and
// formatting survive. The file is replaced atomically under the intents lock.
func SetIntentStatus(path, id string, st Status) error {
	if !intentsValidStatus(st) {
		return fmt.Errorf("set status of %s: unknown status %q (allowed: %s)", id, st, intentsStatuses)
	}
	lock, err := fsx.Acquire(filepath.Join(filepath.Dir(path), ".intents.lock"))
	if err != nil {
		return err
	}
	defer lock.Release()

	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	set, err := ParseIntents(path, data)
	if err != nil {
		return fmt.Errorf("set status of %s: %w", id, err)
	}
	in, ok := set.Get(id)
	if !ok {
		return fmt.Errorf("set status: no intent %q in %s", id, path)
	}
	if in.Status == st {
		return nil
	}
	want := make([]Intent, len(set.Intents))
	copy(want, set.Intents)
	want[set.index[in.ID]].Status = st

	out, err := intentsSplice(data, in.ID, st)
	if err == nil && !intentsSame(path, out, want) {
		err = errors.New("splice did not round-trip")
	}
	if err != nil {
		// An unusual spelling of the status (a tag, a block scalar, an
		// encoding we cannot map columns in): re-encode the edited tree,
		// which keeps comments and order but may reformat.
		out, err = intentsReencode(data, in.ID, st)
		if err != nil {
			return fmt.Errorf("set status of %s: %w", id, err)
		}
		if !intentsSame(path, out, want) {
			return fmt.Errorf("set status of %s: edited file does not round-trip", id)
		}
	}
	return fsx.WriteFile(path, out, fi.Mode().Perm())
}

// intentsSame reports whether data parses to exactly the intents in want,
// ignoring line numbers.
func intentsSame(file string, data []byte, want []Intent) bool {
	got, err := ParseIntents(file, data)
	if err != nil || len(got.Intents) != len(want) {
		return false
	}
	for i := range want {
		a, b := got.Intents[i], want[i]
		a.Line, b.Line = 0, 0
		if !reflect.DeepEqual(a, b) {
			return false
		}
	}
	return true
}

// intentsStatusNode finds the status value node of intent id in a file that
// has already been validated.
func intentsStatusNode(doc *yaml.Node, id string) (*yaml.Node, error) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, errors.New("empty document")
	}
	root := doc.Content[0]
	list := intentsValue(root, "active_intents")
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, errors.New("no active_intents list")
	}
	for _, item := range list.Content {
		idn := intentsValue(item, "id")
		if idn == nil || norm.NFC.String(idn.Value) != id {
			continue
		}
		if st := intentsValue(item, "status"); st != nil && st.Kind == yaml.ScalarNode {
			return st, nil
		}
		return nil, fmt.Errorf("intent %s has no status", id)
	}
	return nil, fmt.Errorf("no intent %q", id)
}

func intentsValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func intentsSplice(data []byte, id string, st Status) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	n, err := intentsStatusNode(&doc, id)
	if err != nil {
		return nil, err
	}
	var quote string
	switch n.Style {
	case 0:
	case yaml.DoubleQuotedStyle:
		quote = `"`
	case yaml.SingleQuotedStyle:
		quote = `'`
	default:
		return nil, fmt.Errorf("status written in an unusual style")
	}
	off, ok := intentsOffset(data, n.Line, n.Column)
	old := quote + n.Value + quote
	if !ok || !bytes.HasPrefix(data[off:], []byte(old)) {
		return nil, errors.New("status not found at its position")
	}
	out := make([]byte, 0, len(data)+len(st))
	out = append(out, data[:off]...)
	out = append(out, quote+string(st)+quote...)
	out = append(out, data[off+len(old):]...)
	return out, nil
}

// intentsOffset converts a YAML line and column (1-based, counted in
// characters the way the YAML scanner counts them) into a byte offset.
func intentsOffset(data []byte, line, col int) (int, bool) {
	i := 0
	if bytes.HasPrefix(data, []byte("\ufeff")) {
		i = 3
	}
	for l := 1; l < line; {
		if i >= len(data) {
			return 0, false
		}
		r, w := utf8.DecodeRune(data[i:])
		i += w
		switch r {
		case '\r':
			if i < len(data) && data[i] == '\n' {
				i++
			}
			l++
		case '\n', '\u0085', '\u2028', '\u2029':
			l++
		}
	}
	for c := 1; c < col; c++ {
		if i >= len(data) {
			return 0, false
		}
		r, w := utf8.DecodeRune(data[i:])
		if r == '\n' || r == '\r' {
			return 0, false
		}
		i += w
	}
	return i, i <= len(data)
}

func intentsReencode(data []byte, id string, st Status) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	n, err := intentsStatusNode(&doc, id)
	if err != nil {
		return nil, err
	}
	n.Kind, n.Tag, n.Style, n.Value = yaml.ScalarNode, "!!str", 0, string(st)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
