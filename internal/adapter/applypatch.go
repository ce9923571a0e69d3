package adapter

import (
	"errors"
	"fmt"
	"strings"
)

// PatchOps lists what a Codex apply_patch body does, file by file:
//
//	*** Begin Patch
//	*** Add File: <path>       (followed by "+" lines: the new file)
//	*** Delete File: <path>
//	*** Update File: <path>    (optionally "*** Move to: <path>", then hunks)
//	*** End Patch
//
// A move is a delete of the old path and a write of the new one. The hunks
// themselves are not interpreted: the engine reads the files before and after.
func PatchOps(body string) ([]Op, error) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "*** Begin Patch" {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, errors.New(`apply_patch: the patch has no "*** Begin Patch" line`)
	}
	var ops []Op
	var add *Op
	var content []string
	flush := func() {
		if add != nil {
			add.Content = strings.Join(content, "")
			add.HasContent = true
			ops = append(ops, *add)
			add, content = nil, nil
		}
	}
	ended := false
	for i := start + 1; i < len(lines) && !ended; i++ {
		l := strings.TrimRight(lines[i], " \t")
		header := func(prefix string) (string, bool) {
			p, ok := strings.CutPrefix(l, prefix)
			return strings.TrimSpace(p), ok
		}
		if p, ok := header("*** Add File:"); ok {
			flush()
			add = &Op{Kind: OpWrite, Path: p}
			continue
		}
		if p, ok := header("*** Delete File:"); ok {
			flush()
			ops = append(ops, Op{Kind: OpDelete, Path: p})
			continue
		}
		if p, ok := header("*** Update File:"); ok {
			flush()
			ops = append(ops, Op{Kind: OpEdit, Path: p})
			continue
		}
		if p, ok := header("*** Move to:"); ok {
			if len(ops) == 0 || ops[len(ops)-1].Kind != OpEdit {
				return nil, fmt.Errorf("apply_patch: line %d: a move that follows no update", i+1)
			}
			ops[len(ops)-1].Kind = OpDelete
			ops = append(ops, Op{Kind: OpWrite, Path: p})
			continue
		}
		if l == "*** End Patch" {
			ended = true
			continue
		}
		if add != nil {
			if s, ok := strings.CutPrefix(lines[i], "+"); ok {
				content = append(content, s+"\n")
			}
		}
	}
	flush()
	for _, op := range ops {
		if op.Path == "" {
			return nil, errors.New("apply_patch: a file header names no path")
		}
	}
	if len(ops) == 0 {
		return nil, errors.New("apply_patch: the patch names no file")
	}
	return ops, nil
}
