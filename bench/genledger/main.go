// Command genledger writes a synthetic but realistic ledger for measuring
// the audit tools at scale: valid, chained Agent Trace records of sessions
// working under many intents on many files, with the ranges and hashes the
// trace policy would record for each edit (computed from simulated file
// contents), refusals among them, and optionally the workspace those edits
// leave behind, so that blame and drift have real files to look at.
//
//	go run ./bench/genledger -n 1000000 -w /tmp/big
//	go run ./bench/genledger -n 1000000 -o big.jsonl
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit"
)

func main() {
	n := flag.Int("n", 100000, "records to write")
	out := flag.String("o", "", "the ledger file (default WORKSPACE/.orchestration/agent_trace.jsonl)")
	ws := flag.String("w", "", "a workspace to write the final files and active_intents.yaml into")
	seed := flag.Uint64("seed", 1, "random seed")
	snaps := flag.Int("snapshots", 0, "keep blame snapshots of each file's last N versions, as trace-time capture would (-1: all)")
	flag.Parse()
	if *out == "" && *ws == "" {
		fmt.Fprintln(os.Stderr, "genledger: give -o FILE or -w DIR")
		os.Exit(2)
	}
	if *out == "" {
		*out = filepath.Join(*ws, ".orchestration", orchestration.LedgerName)
	}
	start := time.Now()
	g := newGen(*n, *seed)
	g.snaps = *snaps
	if err := g.run(*out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "genledger:", err)
		os.Exit(1)
	}
	if g.snaps != 0 {
		c := audit.NewCapture(*ws, *out)
		for _, f := range g.files {
			for _, v := range f.versions {
				if err := c.Keep(v); err != nil {
					fmt.Fprintln(os.Stderr, "genledger:", err)
					os.Exit(1)
				}
			}
		}
	}
	if *ws != "" {
		if err := g.writeWorkspace(*ws); err != nil {
			fmt.Fprintln(os.Stderr, "genledger:", err)
			os.Exit(1)
		}
	}
	fi, _ := os.Stat(*out)
	fmt.Printf("wrote %d records (%d files, %d intents, %d sessions) to %s: %d bytes in %.1fs\n",
		*n, len(g.files), len(g.intents), g.sessions, *out, fi.Size(), time.Since(start).Seconds())
}

var (
	models = []string{"anthropic/claude-opus-4-5", "anthropic/claude-sonnet-4-5", "openai/gpt-5", "google/gemini-2.5-pro", "xai/grok-4"}
	agents = []string{"claude-code", "codex", "gemini-cli", "cursor", "cline"}
	codes  = []string{"SCOPE_VIOLATION", "STALE_FILE", "NOT_READ", "PROTECTED_PATH", "NO_ACTIVE_INTENT", "INVALID_ARGUMENT"}
	words  = strings.Fields("user token session cache order invoice tax rate limit queue event store index page item price total count retry budget quota route handler config")
)

type file struct {
	path     string
	intent   int
	lines    []string // nil: not created yet
	versions [][]byte // the last few, for -snapshots
}

type intent struct {
	id    string
	pkgs  []string
	files []int
}

type gen struct {
	r        *rand.Rand
	files    []*file
	intents  []*intent
	sessions int
	t        time.Time
	snaps    int
}

func newGen(n int, seed uint64) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), t: time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC)}
	nIntents := max(5, n/20000)
	nFiles := max(50, n/200)
	nPkgs := max(10, nFiles/40)
	for i := range nIntents {
		g.intents = append(g.intents, &intent{id: fmt.Sprintf("INT-%03d", i+1)})
	}
	for p := range nPkgs {
		in := g.intents[p%nIntents]
		in.pkgs = append(in.pkgs, fmt.Sprintf("src/%s%d", words[p%len(words)], p))
	}
	for f := range nFiles {
		in := g.intents[f%nIntents]
		pkg := in.pkgs[g.r.IntN(len(in.pkgs))]
		path := fmt.Sprintf("%s/%s_%d.go", pkg, words[g.r.IntN(len(words))], f)
		g.files = append(g.files, &file{path: path, intent: f % nIntents})
		in.files = append(in.files, f)
	}
	return g
}

// line makes a line of plausible code; some are common ("}" and blank).
func (g *gen) line() string {
	switch k := g.r.IntN(20); {
	case k == 0:
		return "}"
	case k == 1:
		return ""
	case k == 2:
		return "\treturn nil"
	default:
		a, b := words[g.r.IntN(len(words))], words[g.r.IntN(len(words))]
		return fmt.Sprintf("\t%s%d := %s.%s(%d, %q)", a, g.r.IntN(1000), b, strings.ToUpper(a[:1])+a[1:], g.r.IntN(1e6), b)
	}
}

func (g *gen) block(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.line()
	}
	return out
}

func join(lines []string) []byte {
	if lines == nil {
		return nil
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// edit changes a file the way agents do: insert a block, replace some lines,
// delete some, or move a block.
func (g *gen) edit(f *file) {
	n := len(f.lines)
	if n < 8 {
		f.lines = append(f.lines, g.block(5)...)
		return
	}
	switch k := g.r.IntN(20); {
	case k < 7: // insert
		at := g.r.IntN(n + 1)
		f.lines = append(f.lines[:at], append(g.block(1+g.r.IntN(10)), f.lines[at:]...)...)
	case k < 16: // replace
		at := g.r.IntN(n - 1)
		m := min(1+g.r.IntN(8), n-at)
		f.lines = append(f.lines[:at], append(g.block(m), f.lines[at+m:]...)...)
	case k < 18: // delete
		at := g.r.IntN(n - 1)
		m := min(1+g.r.IntN(5), n-at-1)
		f.lines = append(f.lines[:at], f.lines[at+m:]...)
	default: // move a block
		m := 3 + g.r.IntN(min(8, n-3))
		from := g.r.IntN(n - m + 1)
		blk := append([]string(nil), f.lines[from:from+m]...)
		rest := append(append([]string(nil), f.lines[:from]...), f.lines[from+m:]...)
		to := g.r.IntN(len(rest) + 1)
		f.lines = append(rest[:to], append(blk, rest[to:]...)...)
	}
}

func (g *gen) run(path string, n int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 4<<20)
	prev := ""
	rev := hexSHA([]byte("HEAD"))[:40]
	written := 0
	for written < n {
		// One session: an agent with a model works under one intent.
		g.sessions++
		in := g.intents[g.r.IntN(len(g.intents))]
		sess := fmt.Sprintf("sess-%06d", g.sessions)
		agent := g.r.IntN(len(agents))
		model := models[(agent+g.r.IntN(2))%len(models)]
		calls := 20 + g.r.IntN(180)
		for c := 0; c < calls && written < n; c++ {
			g.t = g.t.Add(time.Duration(200+g.r.IntN(20000)) * time.Millisecond)
			f := g.files[in.files[g.r.IntN(len(in.files))]]
			meta := orchestration.Meta{Intent: in.id, Session: sess, CallID: fmt.Sprint(c + 1), Tool: "write_to_file", Agent: agents[agent]}
			var ranges []orchestration.Range
			switch k := g.r.IntN(100); {
			case k < 8: // a refusal
				code := codes[g.r.IntN(len(codes))]
				meta.Decision = orchestration.DecisionDeny
				d, _ := json.Marshal(map[string]string{"error": code, "tool": meta.Tool, "path": f.path, "intent": in.id,
					"message": f.path + ": refused (" + code + ")"})
				meta.Denial = d
			default:
				before := join(f.lines)
				if f.lines == nil {
					f.lines = g.block(30 + g.r.IntN(90))
					meta.Mutation = orchestration.MutationCreate
				} else {
					g.edit(f)
					meta.Mutation = orchestration.MutationModify
					meta.BeforeSHA256 = hexSHA(before)
				}
				after := join(f.lines)
				if g.snaps != 0 {
					f.versions = append(f.versions, after)
					if g.snaps > 0 && len(f.versions) > g.snaps {
						f.versions = f.versions[1:]
					}
				}
				ranges, meta.DeletedLines = orchestration.ComputeRanges(before, after)
				meta.AfterSHA256 = hexSHA(after)
				switch {
				case k < 20:
					meta.Tool = "apply_diff"
				case k < 26:
					meta.Tool = "insert_content"
				case k < 30:
					meta.Tool = "execute_command"
				}
			}
			rec, err := orchestration.NewRecord(orchestration.RecordInput{
				Time: g.t, Revision: rev, ToolVersion: "0.1.0", Model: model, AgentName: agents[agent],
				Path: f.path, Ranges: ranges, Meta: meta,
			})
			if err != nil {
				return err
			}
			rec.Meta.Prev = prev
			line, err := orchestration.MarshalShape(rec, orchestration.ShapeAgentTrace)
			if err != nil {
				return err
			}
			w.Write(line)
			w.WriteByte('\n')
			prev = orchestration.LineLink(line)
			written++
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return out.Close()
}

func (g *gen) writeWorkspace(dir string) error {
	for _, f := range g.files {
		if f.lines == nil {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, join(f.lines), 0o644); err != nil {
			return err
		}
	}
	var b strings.Builder
	b.WriteString("active_intents:\n")
	for _, in := range g.intents {
		fmt.Fprintf(&b, "  - id: %s\n    name: synthetic work %s\n    status: IN_PROGRESS\n    owned_scope: [", in.id, in.id)
		for i, p := range in.pkgs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", p+"/**")
		}
		b.WriteString("]\n")
	}
	return os.WriteFile(filepath.Join(dir, ".orchestration", "active_intents.yaml"), []byte(b.String()), 0o644)
}
