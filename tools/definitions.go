package tools

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/intentgate/intentgate/engine"
)

// minDefinitionLines is Roo Code's MIN_COMPONENT_LINES: definitions shorter
// than this are left out of the outline, which is for finding one's way in
// a file, not for listing every one-liner.
const minDefinitionLines = 4

// maxDefinitionFiles is how many files of a directory are outlined, as in
// Roo Code.
const maxDefinitionFiles = 50

// definitionLanguages maps the extensions outlined to their scanner.
var definitionLanguages = map[string]func(src string) []definition{
	".go":  goDefinitions,
	".ts":  func(s string) []definition { return scriptDefinitions(s) },
	".tsx": func(s string) []definition { return scriptDefinitions(s) },
	".js":  func(s string) []definition { return scriptDefinitions(s) },
	".jsx": func(s string) []definition { return scriptDefinitions(s) },
	".py":  pyDefinitions,
}

// definition is a definition's first and last line, 1-based.
type definition struct{ start, end int }

// ListCodeDefinitionNames is list_code_definition_names(path): an outline
// of a source file, or of the source files directly in a directory, in Roo
// Code's shape:
//
//	# server.go
//	12--40 | func (s *Server) Serve(l net.Listener) error {
//
// Go is read with go/parser (functions, methods, types, const and var
// declarations). TypeScript, JavaScript and Python are read by scanners of
// our own that know strings, comments, template literals and brackets
// (respectively indentation), not full parsers: they find functions,
// classes and their methods, interfaces, enums, type aliases, namespaces,
// functions assigned to variables and describe/it/test blocks
// (respectively classes and functions, with their decorators).
func ListCodeDefinitionNames() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		rel, err := DirTarget(c)
		if err != nil {
			return nil, err
		}
		isDir := rel == ""
		if !isDir {
			fi, err := c.WS.Stat(rel)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil, fmt.Errorf("%s does not exist or cannot be accessed", rel)
			case err != nil:
				return nil, err
			case fi.IsDir():
				isDir = true
			case !fi.Mode().IsRegular():
				return nil, fmt.Errorf("%s is neither a file nor a directory", rel)
			}
		}
		if !isDir {
			defs, err := outlineFile(c, rel)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", rel, unwrapPath(err))
			}
			if defs == "" {
				return &engine.Result{Output: "No source code definitions found in file."}, nil
			}
			return &engine.Result{Output: "# " + pathBaseName(rel) + "\n" + defs}, nil
		}
		t, err := openTree(c)
		if err != nil {
			return nil, err
		}
		defer t.close()
		entries, _, err := listTree(ctx, t, rel, false, DefaultListLimit)
		if err != nil {
			return nil, err
		}
		var files []string
		for _, e := range entries {
			if !strings.HasSuffix(e, "/") && definitionLanguages[strings.ToLower(path.Ext(e))] != nil {
				files = append(files, e)
			}
		}
		sort.SliceStable(files, func(i, j int) bool { return collate(files[i], files[j]) < 0 })
		if len(files) > maxDefinitionFiles {
			files = files[:maxDefinitionFiles]
		}
		var b strings.Builder
		for _, f := range files {
			defs, err := outlineFile(c, joinRel(rel, f))
			if err != nil || defs == "" {
				continue
			}
			fmt.Fprintf(&b, "# %s\n%s\n", f, defs)
		}
		if b.Len() == 0 {
			return &engine.Result{Output: "No source code definitions found."}, nil
		}
		return &engine.Result{Output: b.String()}, nil
	})
}

func pathBaseName(rel string) string { return path.Base("/" + rel) }

// outlineFile returns the outline lines of one file, "" when it has none or
// its language is not one we read.
func outlineFile(c *engine.Call, rel string) (string, error) {
	scan := definitionLanguages[strings.ToLower(path.Ext(rel))]
	if scan == nil {
		return "", nil
	}
	if fi, err := c.WS.Stat(rel); err == nil && fi.Size() > maxReadBytes {
		return "", nil
	}
	b, err := c.WS.ReadFile(rel)
	if err != nil {
		return "", err
	}
	if IsBinary(b) {
		return "", nil
	}
	src := string(b)
	return formatDefinitions(scan(src), strings.Split(src, "\n")), nil
}

// formatDefinitions writes "start--end | first line" for each definition of
// at least minDefinitionLines lines, in order of their first line, each
// range once.
func formatDefinitions(defs []definition, lines []string) string {
	sort.SliceStable(defs, func(i, j int) bool { return defs[i].start < defs[j].start })
	seen := map[definition]bool{}
	var b strings.Builder
	for _, d := range defs {
		if d.end-d.start+1 < minDefinitionLines || seen[d] || d.start < 1 || d.start > len(lines) {
			continue
		}
		seen[d] = true
		fmt.Fprintf(&b, "%d--%d | %s\n", d.start, d.end, strings.TrimSuffix(lines[d.start-1], "\r"))
	}
	return b.String()
}

// goDefinitions lists a Go file's top-level declarations. A file with syntax
// errors still yields what go/parser could read.
func goDefinitions(src string) []definition {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	var defs []definition
	add := func(from, to token.Pos) {
		if from.IsValid() && to > from {
			defs = append(defs, definition{fset.Position(from).Line, fset.Position(to - 1).Line})
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			add(d.Pos(), d.End())
		case *ast.GenDecl:
			switch {
			case d.Tok == token.TYPE && d.Lparen.IsValid():
				for _, s := range d.Specs {
					add(s.Pos(), s.End())
				}
			case d.Tok == token.TYPE, d.Tok == token.CONST, d.Tok == token.VAR:
				add(d.Pos(), d.End())
			}
		}
	}
	return defs
}
