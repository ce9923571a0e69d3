// Package demo plays intentgate's scripted tour: it builds a throwaway git
// workspace with two intents and drives a scripted agent session through the
// governed runtime (gate.Open, as every front door does), narrating each call
// and the decision, then prints the ledger and intent_map.md.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/gate"
)

const intents = `active_intents:
  - id: INT-001
    name: Session tokens for the login flow
    status: IN_PROGRESS
    owned_scope: ["src/auth/**"]
    constraints: ["No new third-party dependencies"]
    acceptance_criteria: ["go test ./src/auth/... passes"]
  - id: INT-002
    name: Invoice rounding fix
    status: IN_PROGRESS
    owned_scope: ["src/billing/**"]
    acceptance_criteria: ["totals round half-even"]
`

var files = map[string]string{
	"README.md":                          "# shop\n\nA small shop backend.\n",
	"src/auth/login.go":                  "package auth\n\nfunc Login(user, pass string) bool {\n\treturn user != \"\" && pass != \"\"\n}\n",
	"src/billing/invoice.go":             "package billing\n\nfunc Total(cents []int) int {\n\tt := 0\n\tfor _, c := range cents {\n\t\tt += c\n\t}\n\treturn t\n}\n",
	".intentignore":                      "secrets/\n",
	".orchestration/active_intents.yaml": intents,
	".gitignore":                         ".orchestration/sessions/\n.orchestration/locks/\n.orchestration/*.lock\n.orchestration/intent_map.json\n",
}

// Options say where the tour runs.
type Options struct {
	// Dir is where to build the workspace (it must not exist); "" is a
	// temporary directory, removed afterwards unless Keep is set.
	Dir  string
	Keep bool
	// Version is recorded in the ledger as the tool's version.
	Version string
}

// Run plays the tour, writing the narration to out.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "intentgate-demo-")
		if err != nil {
			return err
		}
		dir = d
	} else if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("demo workspace: %w (choose a directory that does not exist yet)", err)
	}
	if !o.Keep && o.Dir == "" {
		defer os.RemoveAll(dir)
	}
	if err := workspace(dir); err != nil {
		return err
	}
	rt, err := gate.Open(dir, gate.Options{Version: o.Version})
	if err != nil {
		return err
	}
	defer rt.Close()

	d := &demo{ctx: ctx, rt: rt, out: out, session: "demo-session"}
	fmt.Fprintf(out, "intentgate demo: a scripted agent works in a fresh git workspace\n  %s\n\n", dir)
	fmt.Fprintf(out, "Two intents are declared in .orchestration/active_intents.yaml:\n")
	fmt.Fprintf(out, "  INT-001  Session tokens for the login flow   owned_scope: src/auth/**\n")
	fmt.Fprintf(out, "  INT-002  Invoice rounding fix                owned_scope: src/billing/**\n\n")

	d.step("The agent writes a file before choosing what it is working on.",
		"write_to_file", map[string]any{"path": "src/auth/token.go", "content": "package auth\n"})
	d.step("It selects INT-001, and is told the intent's scope, constraints and history.",
		"select_active_intent", map[string]any{"intent_id": "INT-001"})
	d.step("Now it creates a file inside src/auth/.",
		"write_to_file", map[string]any{"path": "src/auth/token.go", "content": "package auth\n\n// Token is an opaque session token.\ntype Token string\n"})
	d.step("It strays into billing code, which belongs to INT-002.",
		"write_to_file", map[string]any{"path": "src/billing/invoice.go", "content": "package billing\n"})
	d.step("It tries to rewrite the ledger that records it.",
		"write_to_file", map[string]any{"path": ".orchestration/agent_trace.jsonl", "content": "{}\n"})
	d.step("It overwrites login.go without having read it.",
		"write_to_file", map[string]any{"path": "src/auth/login.go", "content": "package auth\n"})
	d.step("It reads login.go (the hash of what it saw is recorded).",
		"read_file", map[string]any{"path": "src/auth/login.go"})

	fmt.Fprintf(out, "%d. Meanwhile a teammate edits src/auth/login.go behind the agent's back.\n\n", d.n+1)
	d.n++
	login := filepath.Join(dir, "src", "auth", "login.go")
	if err := os.WriteFile(login, []byte(files["src/auth/login.go"]+"\n// reviewed by a person\n"), 0o644); err != nil {
		return err
	}
	newLogin := "package auth\n\nfunc Login(user, pass string) bool {\n\treturn user != \"\" && len(pass) >= 12\n}\n\n// reviewed by a person\n"
	d.step("The agent writes login.go from its now-stale copy.",
		"write_to_file", map[string]any{"path": "src/auth/login.go", "content": newLogin})
	d.step("It reads the file again...",
		"read_file", map[string]any{"path": "src/auth/login.go"})
	d.step("...and redoes its change on the current content.",
		"write_to_file", map[string]any{"path": "src/auth/login.go", "content": newLogin})
	d.step("It runs a shell command that writes inside and outside its scope: the kernel refuses the write outside, inside the command.",
		"execute_command", map[string]any{"command": "echo '// Tokens expire after 24h.' >> src/auth/token.go && echo 'half-even' > src/billing/NOTES.txt"})

	if err := d.ledger(dir); err != nil {
		return err
	}
	if err := rt.FlushDerived(); err != nil {
		return err
	}
	m, err := os.ReadFile(filepath.Join(dir, ".orchestration", "intent_map.md"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n.orchestration/intent_map.md, regenerated after every change:\n\n%s\n", indent(string(m)))
	if o.Keep || o.Dir != "" {
		fmt.Fprintf(out, "The workspace is kept at %s.\n", dir)
	} else {
		fmt.Fprintln(out, "The workspace was temporary and has been removed; run `intentgate demo --keep` to look around in it.")
	}
	fmt.Fprintln(out, "Next: `intentgate init` in your own repository, then drive agents through `intentgate dispatch`.")
	return d.err
}

type demo struct {
	ctx     context.Context
	rt      *gate.Runtime
	out     io.Writer
	session string
	n       int
	err     error
}

func (d *demo) step(what, tool string, args map[string]any) {
	d.n++
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(args)
	raw := bytes.TrimSpace(buf.Bytes())
	fmt.Fprintf(d.out, "%d. %s\n   agent> %s %s\n", d.n, what, tool, shorten(string(raw), 110))
	c := &engine.Call{ID: fmt.Sprintf("demo-%d", d.n), Session: d.session, Tool: tool, Args: raw,
		Agent: engine.Agent{Name: "demo-agent", Model: "scripted/demo"}}
	res, err := d.rt.Dispatch(d.ctx, c)
	if den, ok := engine.AsDenial(err); ok {
		fmt.Fprintf(d.out, "   DENIED %s: %s\n   hint: %s\n\n", den.Code, den.Message, den.Hint)
		return
	}
	if err != nil {
		var pe *engine.PostError
		if !errors.As(err, &pe) {
			fmt.Fprintf(d.out, "   error: %v\n\n", err)
			d.err = err
			return
		}
		fmt.Fprintf(d.out, "   warning: %v\n", err)
	}
	fmt.Fprintf(d.out, "   allowed:\n%s\n\n", indent(strings.TrimRight(res.Output, "\n")))
}

func (d *demo) ledger(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, ".orchestration", "agent_trace.jsonl"))
	if err != nil {
		return err
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	fmt.Fprintf(d.out, "The ledger .orchestration/agent_trace.jsonl now holds %d records (Agent Trace 0.1.0, hash-chained):\n\n", len(lines))
	var sample []byte
	for _, l := range lines {
		var r struct {
			Files []struct {
				Path          string `json:"path"`
				Conversations []struct {
					Ranges []struct {
						Start int `json:"start_line"`
						End   int `json:"end_line"`
					} `json:"ranges"`
				} `json:"conversations"`
			} `json:"files"`
			Metadata struct {
				IG struct {
					Intent   string          `json:"intent"`
					Tool     string          `json:"tool"`
					Decision string          `json:"decision"`
					Mutation string          `json:"mutation"`
					Denial   json.RawMessage `json:"denial"`
				} `json:"dev.intentgate"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		m := r.Metadata.IG
		path, ranges := "-", ""
		if len(r.Files) > 0 {
			path = r.Files[0].Path
			for _, c := range r.Files[0].Conversations {
				for _, rg := range c.Ranges {
					ranges += fmt.Sprintf(" %d-%d", rg.Start, rg.End)
				}
			}
		}
		what := m.Mutation
		if m.Decision == "deny" {
			var den engine.Denial
			_ = json.Unmarshal(m.Denial, &den)
			what = "denied " + string(den.Code)
		}
		intent := m.Intent
		if intent == "" {
			intent = "(none)"
		}
		fmt.Fprintf(d.out, "  %-9s %-16s %-32s %s%s\n", intent, m.Tool, what, path, ranges)
		if sample == nil && m.Decision == "allow" {
			sample = l
		}
	}
	if sample != nil {
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, sample, "  ", "  ")
		fmt.Fprintf(d.out, "\nOne record in full:\n\n  %s\n", pretty.String())
	}
	return nil
}

func workspace(dir string) error {
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		return err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return err
	}
	if err := wt.AddGlob("."); err != nil {
		return err
	}
	sig := &object.Signature{Name: "intentgate demo", Email: "demo@intentgate.invalid", When: time.Now()}
	_, err = wt.Commit("demo workspace", &git.CommitOptions{Author: sig, Committer: sig})
	return err
}

func indent(s string) string {
	return "     " + strings.ReplaceAll(s, "\n", "\n     ")
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
