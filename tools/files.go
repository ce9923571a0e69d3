// Package tools holds the tools an agent calls, with Roo Code's names,
// parameters and output shapes. Tools hold no policy: by the time one runs,
// the engine's pre-hooks have allowed the call, and every file it touches is
// reached through the engine's Workspace.
package tools

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/intentgate/intentgate/engine"
)

// maxReadBytes bounds what read_file loads: a model cannot use more, and a
// multi-gigabyte file must not take the process down.
const maxReadBytes = 16 << 20

// ReadFile is read_file. Its single form, read_file(path, start_line?,
// end_line?), returns the file's lines as "N | text". Its multi-file form,
// Roo Code's, takes several files each with optional line ranges (an "args"
// string of <file><path>…</path><line_range>a-b</line_range></file>
// elements, or a "files" JSON array) and returns each file in its own
// <file> block inside <files>. A read that showed the whole file is the
// hash lock's baseline; a line range, or a binary file whose content is not
// shown, is not.
func ReadFile() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		reqs, multi, err := readRequests(c)
		if err != nil {
			return nil, err
		}
		if multi {
			return readMany(ctx, c, reqs)
		}
		rel, ok, err := c.Target()
		if err != nil {
			return nil, err
		}
		if !ok {
			_, err := c.Require("path")
			return nil, err
		}
		start, err := intArg(c, "start_line", 1)
		if err != nil {
			return nil, err
		}
		end, err := intArg(c, "end_line", 0)
		if err != nil {
			return nil, err
		}
		if start < 1 || (end != 0 && end < start) {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Path: rel, Parameter: "start_line",
				Message: fmt.Sprintf("line range %d-%d is not valid", start, end),
				Hint:    "line numbers start at 1 and end_line must not be before start_line"}
		}
		doc, err := loadText(c, rel)
		if err != nil {
			return nil, err
		}
		lines := doc.lines()
		whole := start == 1 && (end == 0 || end >= len(lines))
		var out strings.Builder
		switch {
		case doc.binary:
			// Nothing of the content was shown, so the session has not seen
			// what an overwrite would destroy: no baseline.
			whole = false
			fmt.Fprintf(&out, "%s is a binary file (%d bytes); its content is not shown", rel, len(doc.raw))
		case len(lines) == 0:
			fmt.Fprintf(&out, "%s is empty", rel)
		default:
			last := len(lines)
			if end != 0 && end < last {
				last = end
			}
			if start > len(lines) {
				return nil, &engine.Denial{Code: engine.InvalidArgument, Path: rel, Parameter: "start_line",
					Message: fmt.Sprintf("start_line %d is past the end of %s (%d lines)", start, rel, len(lines)),
					Hint:    "read the file without a range to see how long it is"}
			}
			writeNumbered(&out, lines, start, last)
		}
		return &engine.Result{
			Output: out.String(),
			Reads:  []engine.FileRead{{Path: rel, SHA256: engine.Hash(doc.raw), Whole: whole}},
		}, nil
	})
}

// textDoc is a file as read_file shows it.
type textDoc struct {
	raw      []byte
	text     string // UTF-8, extracted for documents
	binary   bool   // not text and no extractor
	encoding string
}

func (d textDoc) lines() []string { return SplitLines([]byte(d.text)) }

// loadText reads rel and turns it into text: documents through their
// extractor, text in whatever encoding it was saved in; anything else is
// binary. A directory is refused with a pointer to list_files.
func loadText(c *engine.Call, rel string) (textDoc, error) {
	fi, err := c.WS.Stat(rel)
	if err != nil {
		return textDoc{}, fmt.Errorf("read %s: %w", rel, unwrapPath(err))
	}
	if fi.IsDir() {
		return textDoc{}, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Path: rel, Parameter: "path",
			Message: fmt.Sprintf("Cannot read '%s' because it is a directory. Use list_files tool instead.", rel),
			Hint:    "call list_files on it to see what it holds, then read_file the files you need"}
	}
	if fi.Size() > maxReadBytes {
		return textDoc{}, fmt.Errorf("read %s: the file is %d bytes, more than the %d read_file handles", rel, fi.Size(), maxReadBytes)
	}
	b, err := c.WS.ReadFile(rel)
	if err != nil {
		return textDoc{}, fmt.Errorf("read %s: %w", rel, unwrapPath(err))
	}
	if text, ok, err := ExtractText(rel, b); ok {
		if err != nil {
			return textDoc{}, fmt.Errorf("read %s: %w", rel, err)
		}
		return textDoc{raw: b, text: text, encoding: "extracted"}, nil
	}
	if IsBinary(b) {
		return textDoc{raw: b, binary: true}, nil
	}
	text, enc := DecodeText(b)
	return textDoc{raw: b, text: text, encoding: enc}, nil
}

// writeNumbered writes lines[from-1:to] as "N | text", numbers padded to
// the width of the last one.
func writeNumbered(out *strings.Builder, lines []string, from, to int) {
	width := len(strconv.Itoa(to))
	for i := from; i <= to; i++ {
		fmt.Fprintf(out, "%*d | %s\n", width, i, strings.TrimSuffix(lines[i-1], "\r"))
	}
}

// WriteFile is write_to_file(path, content): it creates or replaces a file.
func WriteFile() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		rel, ok, err := c.Target()
		if err != nil {
			return nil, err
		}
		if !ok {
			_, err := c.Require("path")
			return nil, err
		}
		content, err := c.Require("content")
		if err != nil {
			return nil, err
		}
		var notes []string
		ch, err := c.WS.Edit(c, rel, func(before []byte, existed bool) ([]byte, error) {
			var clean string
			clean, notes = CleanWriteContent(content, existed && bytes.HasSuffix(before, []byte("\n")))
			return stringBytes(clean), nil
		})
		if err != nil {
			if _, denied := engine.AsDenial(err); denied {
				return nil, err
			}
			return nil, fmt.Errorf("write %s: %w", rel, unwrapPath(err))
		}
		verb := "created"
		if ch.Existed {
			verb = "saved to"
		}
		out := fmt.Sprintf("The content was successfully %s %s.", verb, rel)
		for _, n := range notes {
			out += "\n" + n
		}
		return &engine.Result{
			Output:  out,
			Changes: []engine.FileChange{ch},
		}, nil
	})
}

// stringBytes returns the bytes of s without copying them: the new content
// of a file, up to 64 KiB and more, is already a string of its own (decoded
// from the call's arguments) and a change's After is only ever read (written
// to the file, hashed, diffed, snapshotted), never changed in place.
func stringBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func intArg(c *engine.Call, name string, def int) (int, error) {
	s, ok, err := c.String(name)
	if err != nil || !ok || s == "" {
		return def, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, &engine.Denial{Code: engine.InvalidArgument, Parameter: name,
			Message: fmt.Sprintf("parameter %q must be a whole number, got %q", name, s)}
	}
	return n, nil
}

// SplitLines splits b into lines without their "\n"; a final line without a
// newline is still a line, and an empty input has none.
func SplitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}
