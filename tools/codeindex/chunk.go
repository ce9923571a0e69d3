// Package codeindex is the index behind codebase_search: the workspace's
// code cut into chunks along its definitions, ranked by BM25 offline and by
// embeddings when an OpenAI-compatible endpoint is configured, and kept
// fresh as files change.
package codeindex

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// Chunk is a piece of a file: whole definitions where the language allows.
type Chunk struct {
	Path      string // workspace-relative, slash-separated
	StartLine int    // 1-based, inclusive
	EndLine   int
	Text      string
}

// Chunking bounds: a chunk holds at most maxChunkLines lines; blocks are
// merged up to targetChunkLines.
const (
	maxChunkLines    = 120
	targetChunkLines = 60
)

// Split cuts a file into chunks: a Go file along its top-level declarations
// (each with its doc comment), anything else along blank-line-separated
// blocks merged to a useful size. A definition longer than maxChunkLines is
// cut into pieces.
func Split(path string, src []byte) []Chunk {
	lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	if len(src) == 0 {
		return nil
	}
	var spans [][2]int
	if strings.HasSuffix(path, ".go") {
		spans = goSpans(src)
	}
	if spans == nil {
		spans = blockSpans(lines)
	}
	var out []Chunk
	for _, sp := range spans {
		for start := sp[0]; start <= sp[1]; start += maxChunkLines {
			end := min(sp[1], start+maxChunkLines-1)
			text := strings.Join(lines[start-1:end], "\n")
			if strings.TrimSpace(text) == "" {
				continue
			}
			out = append(out, Chunk{Path: path, StartLine: start, EndLine: end, Text: text})
		}
	}
	return out
}

// goSpans returns the line spans of a Go file's declarations, the package
// clause and imports as one; nil when the file does not parse.
func goSpans(src []byte) [][2]int {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	var spans [][2]int
	headEnd := line(f.Name.End())
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			headEnd = line(g.End())
		}
	}
	headStart := line(f.Package)
	if f.Doc != nil {
		headStart = line(f.Doc.Pos())
	}
	spans = append(spans, [2]int{headStart, headEnd})
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		start := line(d.Pos())
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				start = line(d.Doc.Pos())
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				start = line(d.Doc.Pos())
			}
		}
		spans = append(spans, [2]int{start, line(d.End())})
	}
	return spans
}

// blockSpans groups lines into blocks separated by blank lines at the outer
// level (a line starting without indentation after a blank line starts a
// new block), merged until a block would pass targetChunkLines.
func blockSpans(lines []string) [][2]int {
	var spans [][2]int
	start := 1
	for i := 1; i <= len(lines); i++ {
		next := i + 1
		boundary := next > len(lines) ||
			strings.TrimSpace(lines[i-1]) == "" && next <= len(lines) && startsOuter(lines[next-1])
		if boundary && i-start+1 >= targetChunkLines/3 || next > len(lines) || i-start+1 >= targetChunkLines && strings.TrimSpace(lines[i-1]) == "" {
			spans = append(spans, [2]int{start, i})
			start = next
		}
	}
	return spans
}

func startsOuter(l string) bool {
	return l != "" && l[0] != ' ' && l[0] != '\t' && l[0] != '}' && l[0] != ')' && l[0] != ']'
}
