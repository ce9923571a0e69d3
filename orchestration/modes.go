package orchestration

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/intentgate/intentgate/internal/fsx"
)

// DefaultMode is the mode of a session that has not chosen one.
const DefaultMode = "code"

// ModeGroupNames are the tool groups a mode can grant, as Roo Code names them
// (packages/types ToolGroup), so that modes written for Roo Code load
// unchanged.
var ModeGroupNames = []string{"read", "edit", "browser", "command", "mcp", "modes"}

// Mode is a named set of tool groups, each optionally limited to the files
// whose workspace path matches a regular expression. It mirrors Roo Code's
// ModeConfig.
type Mode struct {
	Slug               string
	Name               string
	RoleDefinition     string
	WhenToUse          string
	Description        string
	CustomInstructions string
	Groups             []ModeGroup
	// Source is "builtin" or the file the mode was declared in.
	Source string
	// Line is where a custom mode starts in its file, 0 for a built-in one.
	Line int
}

// ModeGroup is one group a mode grants.
type ModeGroup struct {
	Name string
	// FileRegex limits an edit group to the files whose canonical workspace
	// path matches it; empty means no limit.
	FileRegex   string
	Description string
	re          *regexp.Regexp
}

// Group returns the mode's entry for the group name.
func (m *Mode) Group(name string) (*ModeGroup, bool) {
	for i := range m.Groups {
		if m.Groups[i].Name == name {
			return &m.Groups[i], true
		}
	}
	return nil, false
}

// Allows reports whether the group admits the canonical workspace path rel.
func (g *ModeGroup) Allows(rel string) bool {
	if g.FileRegex == "" {
		return true
	}
	re := g.re
	if re == nil {
		var err error
		if re, err = compileFileRegex(g.FileRegex); err != nil {
			return false
		}
	}
	return re.MatchString(rel)
}

// String describes the group as a person reads it: "edit (files matching
// \.md$: Markdown files only)".
func (g ModeGroup) String() string {
	if g.FileRegex == "" {
		return g.Name
	}
	if g.Description != "" {
		return fmt.Sprintf("%s (files matching %s: %s)", g.Name, g.FileRegex, g.Description)
	}
	return fmt.Sprintf("%s (files matching %s)", g.Name, g.FileRegex)
}

// compileFileRegex compiles a fileRegex. Roo Code tests it with
// new RegExp(pattern).test(path); Go's RE2 reads the patterns modes use
// (\.md$, ^docs/, \.(ts|tsx)$) the same way, and refuses the JavaScript
// features it lacks (lookaround, backreferences) instead of guessing.
func compileFileRegex(p string) (*regexp.Regexp, error) {
	return regexp.Compile(p)
}

func builtinGroups(names ...string) []ModeGroup {
	gs := make([]ModeGroup, len(names))
	for i, n := range names {
		gs[i] = ModeGroup{Name: n}
	}
	return gs
}

// builtinModes are Roo Code's DEFAULT_MODES (packages/types/src/mode.ts): the
// same slugs and groups, architect editing Markdown only and orchestrator
// holding no group at all, so that it can only delegate. The texts are ours.
func builtinModes() []Mode {
	return []Mode{
		{Slug: "code", Name: "Code", Source: "builtin",
			Description: "Write, change and refactor code",
			Groups:      builtinGroups("read", "edit", "browser", "command", "mcp")},
		{Slug: "architect", Name: "Architect", Source: "builtin",
			Description: "Plan and design before implementation",
			Groups: []ModeGroup{{Name: "read"},
				{Name: "edit", FileRegex: `\.md$`, Description: "Markdown files only", re: regexp.MustCompile(`\.md$`)},
				{Name: "browser"}, {Name: "mcp"}}},
		{Slug: "ask", Name: "Ask", Source: "builtin",
			Description: "Get answers and explanations",
			Groups:      builtinGroups("read", "browser", "mcp")},
		{Slug: "debug", Name: "Debug", Source: "builtin",
			Description: "Diagnose and fix software issues",
			Groups:      builtinGroups("read", "edit", "browser", "command", "mcp")},
		{Slug: "orchestrator", Name: "Orchestrator", Source: "builtin",
			Description: "Coordinate tasks across multiple modes",
			Groups:      []ModeGroup{}},
	}
}

// ModeSet is the modes in force: the built-in ones, with the custom modes of
// a workspace added or, for the same slug, taking their place (as Roo Code's
// getAllModes does).
type ModeSet struct {
	File  string // the custom modes file, "" when there is none
	Modes []Mode
	index map[string]int
}

// BuiltinModes returns the built-in modes alone.
func BuiltinModes() *ModeSet { return newModeSet("", nil) }

func newModeSet(file string, custom []Mode) *ModeSet {
	s := &ModeSet{File: file, Modes: builtinModes(), index: map[string]int{}}
	for i, m := range s.Modes {
		s.index[m.Slug] = i
	}
	for _, m := range custom {
		if i, ok := s.index[m.Slug]; ok {
			s.Modes[i] = m
			continue
		}
		s.index[m.Slug] = len(s.Modes)
		s.Modes = append(s.Modes, m)
	}
	return s
}

// Get returns the mode with the given slug.
func (s *ModeSet) Get(slug string) (*Mode, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := s.index[slug]
	if !ok {
		return nil, false
	}
	return &s.Modes[i], true
}

// Slugs returns the slugs of the modes in order: built-in first, then custom.
func (s *ModeSet) Slugs() []string {
	out := make([]string, len(s.Modes))
	for i, m := range s.Modes {
		out[i] = m.Slug
	}
	return out
}

// ModesError is one problem in a modes file, with its position.
type ModesError = yamlPos

// ModesErrors is every problem found in one modes file, in file order.
// errors.As finds an individual *ModesError in it.
type ModesErrors = yamlErrors

// LoadModes reads the custom modes file at path (.orchestration/modes.yaml).
// A missing file means the built-in modes alone.
func LoadModes(path string) (*ModeSet, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return BuiltinModes(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("modes file %s: %w", path, err)
	}
	return ParseModes(path, data)
}

const modesFields = "slug, name, roleDefinition, whenToUse, description, customInstructions, groups, source"

var modesSlug = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9-]+$`) })

// ParseModes strictly parses a custom modes file, in the shape of Roo Code's
// .roomodes:
//
//	customModes:
//	  - slug: docs
//	    name: Documentation writer
//	    groups:
//	      - read
//	      - - edit
//	        - fileRegex: \.mdx?$
//	          description: Markdown only
//
// Unknown fields, duplicate keys, slugs and groups, unknown groups and
// regular expressions that do not compile are errors naming file, line and
// column. file is used in messages only.
func ParseModes(file string, data []byte) (set *ModeSet, err error) {
	p := &modesParser{yamlParser{file: file}}
	defer func() {
		// A bad file must read as an error, never crash a hook.
		if r := recover(); r != nil {
			set = nil
			err = ModesErrors{{File: file, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}}
		}
	}()
	custom, ok := p.parse(data)
	if len(p.errs) > 0 || !ok {
		if len(p.errs) == 0 {
			p.at(1, 1, "cannot parse the file")
		}
		return nil, p.sorted()
	}
	return newModeSet(file, custom), nil
}

type modesParser struct {
	yamlParser
}

func (p *modesParser) parse(data []byte) ([]Mode, bool) {
	root, ok := p.decode(data) // an empty file declares no custom modes
	if root == nil {
		return nil, ok
	}
	switch {
	case root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null":
		return nil, true
	case root.Kind == yaml.AliasNode:
		p.errorf(root, "YAML aliases are not supported")
		return nil, false
	case root.Kind != yaml.MappingNode:
		p.errorf(root, "expected a mapping with the key customModes at the top level, got %s", intentsDescribe(root))
		return nil, false
	}
	var list *yaml.Node
	p.pairs(root, " at the top level", func(key string, k, v *yaml.Node) {
		if key != "customModes" {
			p.errorf(k, "unknown top-level field %q (known fields: customModes)", key)
			return
		}
		list = v
	})
	if list == nil {
		p.errorf(root, "missing top-level key customModes (write \"customModes: []\" for none)")
		return nil, false
	}
	switch {
	case list.Kind == yaml.AliasNode:
		p.errorf(list, "YAML aliases are not supported")
		return nil, false
	case list.Kind == yaml.ScalarNode && list.ShortTag() == "!!null":
		return nil, true
	case list.Kind != yaml.SequenceNode:
		p.errorf(list, "customModes must be a list of modes, got %s", intentsDescribe(list))
		return nil, false
	}
	var out []Mode
	first := map[string]int{}
	for i, item := range list.Content {
		m, slugNode, ok := p.mode(item, i)
		if slugNode != nil {
			if line, dup := first[m.Slug]; dup {
				p.errorf(slugNode, "duplicate mode slug %q (first defined at line %d)", m.Slug, line)
				ok = false
			} else {
				first[m.Slug] = slugNode.Line
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, true
}

func (p *modesParser) mode(n *yaml.Node, i int) (Mode, *yaml.Node, bool) {
	m := Mode{Source: p.file, Line: n.Line}
	label := fmt.Sprintf("mode #%d", i+1)
	switch {
	case n.Kind == yaml.AliasNode:
		p.errorf(n, "%s: YAML aliases are not supported", label)
		return m, nil, false
	case n.Kind != yaml.MappingNode:
		p.errorf(n, "%s must be a mapping with the fields %s, got %s", label, modesFields, intentsDescribe(n))
		return m, nil, false
	}
	errs := len(p.errs)
	var slugNode *yaml.Node
	for j := 0; j+1 < len(n.Content); j += 2 {
		if k := n.Content[j]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!str" && k.Value == "slug" {
			if s, ok := p.str(k, n.Content[j+1], "slug", label); ok {
				if modesSlug().MatchString(s) {
					m.Slug, slugNode, label = s, n.Content[j+1], "mode "+s
				} else {
					p.errorf(n.Content[j+1], "slug %q in %s may contain only letters, digits and dashes", s, label)
				}
			}
			break
		}
	}
	seen := map[string]bool{}
	where := " in " + label
	p.pairs(n, where, func(key string, k, v *yaml.Node) {
		seen[key] = true
		switch key {
		case "slug":
		case "name":
			m.Name, _ = p.str(k, v, key, label)
		case "roleDefinition":
			m.RoleDefinition, _ = p.str(k, v, key, label)
		case "whenToUse":
			m.WhenToUse, _ = p.optStr(k, v, key, label)
		case "description":
			m.Description, _ = p.optStr(k, v, key, label)
		case "customInstructions":
			m.CustomInstructions, _ = p.optStr(k, v, key, label)
		case "source":
			if s, ok := p.str(k, v, key, label); ok && s != "global" && s != "project" {
				p.errorf(v, "source %q in %s must be global or project", s, label)
			}
		case "groups":
			m.Groups = p.groups(v, label)
		default:
			p.errorf(k, "unknown field %q%s (known fields: %s)", key, where, modesFields)
		}
	})
	for _, f := range []string{"slug", "name", "groups"} {
		if !seen[f] {
			p.errorf(n, "missing field %q%s", f, where)
		}
	}
	return m, slugNode, len(p.errs) == errs && m.Slug != ""
}

func (p *modesParser) groups(v *yaml.Node, label string) []ModeGroup {
	switch {
	case v.Kind == yaml.AliasNode:
		p.errorf(v, "groups in %s: YAML aliases are not supported", label)
		return nil
	case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
		return []ModeGroup{}
	case v.Kind != yaml.SequenceNode:
		p.errorf(v, "groups in %s must be a list of group names or [name, {fileRegex, description}] pairs, got %s", label, intentsDescribe(v))
		return nil
	}
	out := []ModeGroup{}
	first := map[string]int{}
	for _, e := range v.Content {
		g, at, ok := p.group(e, label)
		if !ok {
			continue
		}
		if line, dup := first[g.Name]; dup {
			p.errorf(at, "duplicate group %q in %s (first at line %d)", g.Name, label, line)
			continue
		}
		first[g.Name] = at.Line
		out = append(out, g)
	}
	return out
}

func (p *modesParser) group(e *yaml.Node, label string) (ModeGroup, *yaml.Node, bool) {
	var g ModeGroup
	name := func(n *yaml.Node) bool {
		s, ok := p.str(n, n, "group name", label)
		if !ok {
			return false
		}
		for _, known := range ModeGroupNames {
			if s == known {
				g.Name = s
				return true
			}
		}
		p.errorf(n, "unknown group %q in %s (known groups: %s)", s, label, strings.Join(ModeGroupNames, ", "))
		return false
	}
	switch {
	case e.Kind == yaml.ScalarNode:
		return g, e, name(e)
	case e.Kind == yaml.SequenceNode && len(e.Content) == 2:
	default:
		p.errorf(e, "a group in %s must be a group name or a [name, {fileRegex, description}] pair, got %s", label, intentsDescribe(e))
		return g, e, false
	}
	if !name(e.Content[0]) {
		return g, e, false
	}
	opts := e.Content[1]
	if opts.Kind != yaml.MappingNode {
		p.errorf(opts, "the options of group %s in %s must be a mapping with fileRegex and description, got %s", g.Name, label, intentsDescribe(opts))
		return g, e, false
	}
	errs := len(p.errs)
	where := fmt.Sprintf(" in the options of group %s in %s", g.Name, label)
	p.pairs(opts, where, func(key string, k, v *yaml.Node) {
		switch key {
		case "fileRegex":
			s, ok := p.optStr(k, v, key, label)
			if !ok || s == "" {
				return
			}
			re, err := compileFileRegex(s)
			if err != nil {
				p.errorf(v, "fileRegex %q%s does not compile: %v (intentgate matches it with Go's RE2, which has no lookaround or backreferences)", s, where, err)
				return
			}
			g.FileRegex, g.re = s, re
		case "description":
			g.Description, _ = p.optStr(k, v, key, label)
		default:
			p.errorf(k, "unknown field %q%s (known fields: fileRegex, description)", key, where)
		}
	})
	return g, e, len(p.errs) == errs
}

// ModeStore keeps the modes of a workspace current. The file is parsed
// again whenever its bytes change, and read again whenever a stat cannot
// prove them unchanged (fsx.File); a bad edit keeps the last good set in
// force and is reported by Problem. It is safe for concurrent use.
type ModeStore struct {
	path string
	file *fsx.File

	mu      sync.Mutex
	good    *ModeSet
	problem error
	sum     [32]byte
	read    bool
}

// OpenModes returns the store for the custom modes file at path.
func OpenModes(path string) *ModeStore {
	return &ModeStore{path: path, file: fsx.NewFile(path, 0)}
}

// Current returns the modes in force. It fails only when no version of the
// file has been in force in this process (a missing file puts the built-in
// modes in force): falling back to the built-in modes then could grant what
// a custom mode of the same slug was written to withhold.
func (s *ModeStore) Current() (*ModeSet, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, fresh, err := s.file.Read()
	switch {
	case err == nil && !fresh:
		// The bytes examined last time, unchanged.
	case errors.Is(err, fs.ErrNotExist):
		if s.good == nil || s.read {
			s.good = BuiltinModes() // built once while the file stays missing
		}
		s.problem, s.read = nil, false
		return s.good, nil
	case err != nil:
		s.problem = fmt.Errorf("modes file %s: %w", s.path, err)
	default:
		sum := sha256.Sum256(data)
		if !s.read || sum != s.sum {
			s.sum, s.read = sum, true
			if set, err := ParseModes(s.path, data); err != nil {
				s.problem = err
			} else {
				s.good, s.problem = set, nil
			}
		}
	}
	if s.good == nil {
		return nil, s.problem
	}
	return s.good, nil
}

// Problem says why the file on disk is not the one in force, or nil.
func (s *ModeStore) Problem() error {
	if _, err := s.Current(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}

// ModeName returns the display name of the mode with the given slug.
func (s *ModeStore) ModeName(slug string) (string, bool) {
	set, err := s.Current()
	if err != nil {
		return "", false
	}
	m, ok := set.Get(slug)
	if !ok {
		return "", false
	}
	return m.Name, true
}

// ModeSlugs returns the slugs of the modes in force.
func (s *ModeStore) ModeSlugs() []string {
	set, err := s.Current()
	if err != nil {
		return BuiltinModes().Slugs()
	}
	return set.Slugs()
}

// DefaultMode returns the mode of a session that has chosen none.
func (s *ModeStore) DefaultMode() string { return DefaultMode }
