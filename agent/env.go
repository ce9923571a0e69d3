package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// maxListedFiles bounds the workspace listing in <environment_details>, as
// Roo Code's maxWorkspaceFiles does.
const maxListedFiles = 200

// skipDirs are never listed: too large to be useful, or governance state.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".orchestration": true,
	"vendor": true, "dist": true, "build": true, "__pycache__": true, ".venv": true}

// listWorkspace lists files breadth first, directories with a trailing
// slash, stopping at limit entries.
func listWorkspace(root string, limit int) (lines []string, truncated bool) {
	queue := []string{""}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil {
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			rel := e.Name()
			if dir != "" {
				rel = dir + "/" + e.Name()
			}
			if e.Type()&fs.ModeSymlink == 0 && e.IsDir() {
				if skipDirs[e.Name()] {
					continue
				}
				queue = append(queue, rel)
				rel += "/"
			}
			if len(lines) >= limit {
				return lines, true
			}
			lines = append(lines, rel)
		}
	}
	return lines, false
}

// recentLedger returns a line for each of the last n ledger records.
func recentLedger(path string, n int) []string {
	// Only the tail is read: the cost of a turn must not grow with the
	// ledger.
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const tail = 64 << 10
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(st.Size()-tail, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return nil
	}
	if off > 0 {
		// Drop the first, probably cut, line.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		var rec struct {
			Timestamp string `json:"timestamp"`
			Files     []struct {
				Path string `json:"path"`
			} `json:"files"`
			Metadata map[string]struct {
				Intent   string `json:"intent"`
				Tool     string `json:"tool"`
				Decision string `json:"decision"`
			} `json:"metadata"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		m := rec.Metadata["dev.intentgate"]
		var paths []string
		for _, f := range rec.Files {
			paths = append(paths, f.Path)
		}
		line := fmt.Sprintf("%s %s %s", rec.Timestamp, m.Tool, strings.Join(paths, ", "))
		if m.Intent != "" {
			line += " (" + m.Intent + ")"
		}
		if m.Decision != "" && m.Decision != "allow" {
			line += " " + m.Decision
		}
		out = append(out, line)
		if len(out) > n {
			out = out[1:]
		}
	}
	return out
}

// environmentDetails is the block every user message ends with: what the
// model could otherwise only learn by asking.
func (t *Task) environmentDetails(withFiles bool) string {
	var b strings.Builder
	b.WriteString("<environment_details>\n")
	if withFiles {
		fmt.Fprintf(&b, "# Current Workspace Directory (%s) Files\n", filepath.ToSlash(t.opts.Workspace))
		lines, truncated := listWorkspace(t.opts.Workspace, maxListedFiles)
		if len(lines) == 0 {
			b.WriteString("(no files)\n")
		}
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		if truncated {
			fmt.Fprintf(&b, "(File list truncated at %d entries. Use list_files on specific directories to explore further.)\n", maxListedFiles)
		}
		b.WriteString("\n")
	}
	now := t.opts.Now().UTC()
	fmt.Fprintf(&b, "# Current Time\nCurrent time in ISO 8601 UTC format: %s\n\n", now.Format(time.RFC3339))
	name := t.mode
	if t.opts.ModeName != nil {
		if n, ok := t.opts.ModeName(t.mode); ok {
			name = n
		}
	}
	fmt.Fprintf(&b, "# Current Mode\n<slug>%s</slug>\n<name>%s</name>\n<model>%s</model>\n\n", t.mode, name, t.opts.Model)
	intent := ""
	if t.opts.ActiveIntent != nil {
		intent = t.opts.ActiveIntent(t.id)
	}
	if intent == "" {
		b.WriteString("# Active Intent\nNone selected: call select_active_intent before changing any file.\n\n")
	} else {
		fmt.Fprintf(&b, "# Active Intent\n%s\n\n", intent)
	}
	b.WriteString("# Recent Ledger Activity\n")
	recent := recentLedger(filepath.Join(t.opts.Workspace, ".orchestration", "agent_trace.jsonl"), 5)
	if len(recent) == 0 {
		b.WriteString("(none)\n")
	}
	for _, l := range recent {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n")
	b.WriteString(t.terminals())
	b.WriteString("</environment_details>")
	return b.String()
}
