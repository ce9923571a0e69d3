package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// treeParse reads args after "hook" with the flags the command tree gives
// `intentgate hook` (pflag, as cobra does): the reference hookArgs must
// agree with whenever it accepts a command line.
func treeParse(args []string) (workspace string, onlyGoverned bool, pos []string, err error) {
	fs := pflag.NewFlagSet("hook", pflag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fs.StringVarP(&workspace, "workspace", "w", "", "")
	fs.BoolVar(&onlyGoverned, "only-governed", false, "")
	fs.BoolP("help", "h", false, "")
	if err := fs.Parse(args); err != nil {
		return "", false, nil, err
	}
	if h, _ := fs.GetBool("help"); h {
		return "", false, nil, pflag.ErrHelp
	}
	return workspace, onlyGoverned, fs.Args(), nil
}

// checkHookArgs fails when hookArgs accepts args and the command tree
// would read them differently, or reject them.
func checkHookArgs(t *testing.T, args []string) (accepted bool) {
	t.Helper()
	o, agent, ok := hookArgs(args)
	if !ok {
		return false
	}
	if args[0] != "hook" {
		t.Fatalf("hookArgs(%q) accepted a command other than hook", args)
	}
	ws, only, pos, err := treeParse(args[1:])
	if err != nil {
		t.Fatalf("hookArgs(%q) = %+v, %q; the command tree rejects it: %v", args, o, agent, err)
	}
	if len(pos) != 1 || pos[0] != agent || ws != o.Workspace || only != o.OnlyGoverned {
		t.Fatalf("hookArgs(%q) = %+v, %q; the command tree reads workspace %q, only-governed %v, args %q", args, o, agent, ws, only, pos)
	}
	return true
}

func TestHookArgs(t *testing.T) {
	for _, tc := range []struct {
		args   string // split on spaces; "_" stands for an empty argument
		accept bool
	}{
		{"hook claude-code", true},
		{"hook claude-code --only-governed", true},
		{"hook --only-governed claude-code", true},
		{"hook claude-code --only-governed=false", true},
		{"hook claude-code --only-governed=T", true},
		{"hook claude-code -w /tmp/ws", true},
		{"hook claude-code -w/tmp/ws", true},
		{"hook claude-code --workspace /tmp/ws", true},
		{"hook claude-code --workspace=/tmp/ws", true},
		{"hook claude-code --workspace=", true},
		{"hook -w --only-governed claude-code", true}, // the flag's value, as pflag reads it
		{"hook claude-code -w a -w b", true},
		{"hook _", true},
		{"hook nope", true}, // an unknown agent is the hook command's own error
		{"hook", false},
		{"hook claude-code codex", false},
		{"hook claude-code --help", false},
		{"hook claude-code -h", false},
		{"hook claude-code --version", false},
		{"hook claude-code --only-governed=maybe", false},
		{"hook claude-code -w", false},
		{"hook claude-code --workspace", false},
		{"hook claude-code -w=/tmp/ws", false},
		{"hook claude-code ---workspace=/tmp/ws", false},
		{"hook claude-code --", false},
		{"hook -- claude-code", false},
		{"hook claude-code -", false},
		{"hook claude-code -x", false},
		{"hook claude-code --bogus", false},
		{"--version", false},
		{"trace verify", false},
		{"help hook", false},
	} {
		args := strings.Split(tc.args, " ")
		for i, a := range args {
			if a == "_" {
				args[i] = ""
			}
		}
		if got := checkHookArgs(t, args); got != tc.accept {
			t.Errorf("hookArgs(%q) accepted = %v, want %v", args, got, tc.accept)
		}
	}
}

// Whatever intentgate answers itself, the command tree reads the same way.
func FuzzHookArgs(f *testing.F) {
	for _, s := range []string{
		"claude-code", "claude-code\x00--only-governed", "-w\x00x\x00codex", "-wx\x00codex",
		"--workspace=a=b\x00gemini", "--only-governed=0\x00cline", "-w\x00-h\x00cursor", "-w=\x00x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkHookArgs(t, append([]string{"hook"}, strings.Split(s, "\x00")...))
	})
}
