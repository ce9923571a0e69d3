package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/engine"
)

// MaxReadFiles is how many files one multi-file read_file call may name, as
// Roo Code tells the model (maxConcurrentFileReads, 5 by default).
const MaxReadFiles = 5

// readRequest is one file of a multi-file read, with its line ranges.
type readRequest struct {
	Path   string
	Ranges [][2]int
}

var rangeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)-(\d+)`) })

// readRequests parses the multi-file forms. multi is false when the call
// uses the single "path" form.
func readRequests(c *engine.Call) ([]readRequest, bool, error) {
	if args, ok, err := c.String("args"); err != nil {
		return nil, false, err
	} else if ok {
		reqs := ParseReadArgs(args)
		return checkRequests(c, reqs, "args")
	}
	raw, err := c.Arg("files")
	if err != nil || raw == nil || string(raw) == "null" {
		return nil, false, err
	}
	var files []struct {
		Path       string            `json:"path"`
		LineRange  json.RawMessage   `json:"line_range"`
		LineRanges []json.RawMessage `json:"line_ranges"`
	}
	if err := json.Unmarshal(raw, &files); err != nil {
		return nil, false, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "files",
			Message: "files must be a list of {path, line_ranges}: " + err.Error(),
			Hint:    `e.g. {"files":[{"path":"src/a.go","line_ranges":["1-40"]},{"path":"README.md"}]}`}
	}
	var reqs []readRequest
	for _, f := range files {
		if f.Path == "" {
			continue
		}
		r := readRequest{Path: f.Path}
		for _, lr := range append([]json.RawMessage{f.LineRange}, f.LineRanges...) {
			if rg, ok := jsonRange(lr); ok {
				r.Ranges = append(r.Ranges, rg)
			}
		}
		reqs = append(reqs, r)
	}
	return checkRequests(c, reqs, "files")
}

func checkRequests(c *engine.Call, reqs []readRequest, param string) ([]readRequest, bool, error) {
	if len(reqs) == 0 {
		return nil, false, &engine.Denial{Code: engine.MissingParameter, Tool: c.Tool, Parameter: param,
			Message: "read_file needs at least one file with a path in " + param,
			Hint:    "name each file as <file><path>src/a.go</path></file>, or send path alone for one file"}
	}
	if len(reqs) > MaxReadFiles {
		return nil, false, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: param,
			Message: fmt.Sprintf("read_file can read at most %d files in one call; this one names %d", MaxReadFiles, len(reqs)),
			Hint:    fmt.Sprintf("split the files over several read_file calls of at most %d each", MaxReadFiles)}
	}
	return reqs, true, nil
}

// jsonRange accepts "a-b", [a, b] and {"start": a, "end": b}.
func jsonRange(raw json.RawMessage) ([2]int, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return [2]int{}, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return textRange(s)
	}
	var pair []int
	if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
		return [2]int{pair[0], pair[1]}, true
	}
	var obj struct{ Start, End *int }
	if json.Unmarshal(raw, &obj) == nil && obj.Start != nil && obj.End != nil {
		return [2]int{*obj.Start, *obj.End}, true
	}
	return [2]int{}, false
}

func textRange(s string) ([2]int, bool) {
	m := rangeRE().FindStringSubmatch(s)
	if m == nil {
		return [2]int{}, false
	}
	a, err1 := strconv.Atoi(m[1])
	b, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return [2]int{}, false
	}
	return [2]int{a, b}, true
}

// ParseReadArgs reads Roo Code's read_file args: <file> elements, each with
// one <path> and any number of <line_range>start-end</line_range>. It is
// lenient the way models need (whitespace, an <args> wrapper, text between
// elements) and never fails: what it cannot read, it leaves out. A file
// without a path is skipped, as Roo does.
func ParseReadArgs(s string) []readRequest {
	var reqs []readRequest
	for {
		body, rest, ok := element(s, "file")
		if !ok {
			return reqs
		}
		s = rest
		p, _, ok := element(body, "path")
		p = strings.TrimSpace(xmlText(p))
		if !ok || p == "" {
			continue
		}
		r := readRequest{Path: p}
		for {
			lr, more, ok := element(body, "line_range")
			if !ok {
				break
			}
			body = more
			if rg, ok := textRange(lr); ok {
				r.Ranges = append(r.Ranges, rg)
			}
		}
		reqs = append(reqs, r)
	}
}

// element finds the first <name>…</name> in s and returns its inner text
// and what follows it.
func element(s, name string) (inner, rest string, ok bool) {
	open, end := "<"+name+">", "</"+name+">"
	i := strings.Index(s, open)
	if i < 0 {
		return "", s, false
	}
	s = s[i+len(open):]
	j := strings.Index(s, end)
	if j < 0 {
		return "", "", false
	}
	return s[:j], s[j+len(end):], true
}

var xmlEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&")

func xmlText(s string) string { return xmlEntities.Replace(s) }

// readMany reads each requested file into its own <file> block. A path that
// leaves the workspace refuses the whole call, so a refusal is on record; a
// file that cannot be read gets an <error> in its block and the others are
// still read.
func readMany(ctx context.Context, c *engine.Call, reqs []readRequest) (*engine.Result, error) {
	rels := make([]string, len(reqs))
	for i, rq := range reqs {
		rel, err := c.WS.Canonical(rq.Path)
		if err != nil {
			if d, ok := engine.AsDenial(err); ok {
				if d.Tool == "" {
					d.Tool = c.Tool
				}
				if d.Path == "" {
					d.Path = rq.Path
				}
			}
			return nil, err
		}
		rels[i] = rel
	}
	res := &engine.Result{}
	blocks := make([]string, 0, len(reqs))
	for i, rq := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		block, read := readBlock(c, rels[i], rq.Ranges)
		blocks = append(blocks, block)
		if read != nil {
			res.Reads = append(res.Reads, *read)
		}
	}
	res.Output = "<files>\n" + strings.Join(blocks, "\n") + "\n</files>"
	return res, nil
}

// readBlock is one file's <file> block in Roo Code's shape.
func readBlock(c *engine.Call, rel string, ranges [][2]int) (string, *engine.FileRead) {
	fail := func(msg string) (string, *engine.FileRead) {
		return fmt.Sprintf("<file><path>%s</path><error>Error reading file: %s</error></file>", rel, msg), nil
	}
	for _, r := range ranges {
		if r[0] > r[1] {
			return fail("Invalid line range: end line cannot be less than start line")
		}
		if r[0] < 1 {
			return fail("Invalid line range values")
		}
	}
	doc, err := loadText(c, rel)
	if err != nil {
		if d, ok := engine.AsDenial(err); ok {
			return fail(d.Message)
		}
		return fail(unwrapPath(err).Error())
	}
	read := &engine.FileRead{Path: rel, SHA256: engine.Hash(doc.raw)}
	if doc.binary {
		format := strings.TrimPrefix(strings.ToLower(pathExt(rel)), ".")
		if format == "" {
			format = "bin"
		}
		return fmt.Sprintf("<file><path>%s</path>\n<binary_file format=\"%s\">Binary file - content not displayed</binary_file>\n</file>", rel, format), read
	}
	lines := doc.lines()
	var b strings.Builder
	fmt.Fprintf(&b, "<file><path>%s</path>\n", rel)
	if len(ranges) == 0 {
		read.Whole = true
		if len(lines) == 0 {
			b.WriteString("<content/><notice>File is empty</notice>\n</file>")
			return b.String(), read
		}
		fmt.Fprintf(&b, "<content lines=\"1-%d\">\n", len(lines))
		writeNumbered(&b, lines, 1, len(lines))
		b.WriteString("</content>\n</file>")
		return b.String(), read
	}
	for i, r := range ranges {
		if r[0] > len(lines) {
			return fail(fmt.Sprintf("line %d is past the end of the file (%d lines)", r[0], len(lines)))
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "<content lines=\"%d-%d\">\n", r[0], r[1])
		writeNumbered(&b, lines, r[0], min(r[1], len(lines)))
		b.WriteString("</content>")
		if r[0] == 1 && r[1] >= len(lines) {
			read.Whole = true
		}
	}
	b.WriteString("\n</file>")
	return b.String(), read
}

func pathExt(rel string) string {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		return base[i:]
	}
	return ""
}
