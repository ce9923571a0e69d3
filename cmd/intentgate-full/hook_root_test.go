package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A hook process builds the root command with the hook command alone
// (command in main.go); what a person sees of it must be what the full tree
// of commands gives for the same arguments.
func TestHookRootAnswersLikeTheFullTree(t *testing.T) {
	cases := []struct {
		args []string
		want string // in the full tree's answer
	}{
		{[]string{"hook", "--help"}, "Usage:\n  intentgate hook AGENT [flags]"},
		{[]string{"hook", "-h"}, "--only-governed"},
		{[]string{"hook"}, "accepts 1 arg(s), received 0"},
		{[]string{"hook", "no-such-agent"}, "exit: 2"},
		{[]string{"hook", "claude-code", "extra"}, "accepts 1 arg(s), received 2"},
		{[]string{"hook", "claude-code", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"hook", "claude-code", "--workspace"}, "flag needs an argument"},
		// An empty event is refused, in Claude Code's form.
		{[]string{"hook", "claude-code"}, `"permissionDecision":"deny"`},
	}
	run := func(full bool, args []string) string {
		var out, errw bytes.Buffer
		root := command(args, strings.NewReader(""), &out, &errw)
		if full {
			root = newRoot(strings.NewReader(""), &out, &errw)
		}
		root.SetArgs(args)
		err := root.Execute()
		code := 0
		if err != nil {
			code = exitCode(err)
		}
		return fmt.Sprintf("error: %v\nexit: %d\nstdout:\n%s\nstderr:\n%s", err, code, out.String(), errw.String())
	}
	for _, c := range cases {
		args := c.args
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Setenv("INTENTGATE_NO_DAEMON", "1")
			t.Chdir(t.TempDir())
			got, want := run(false, args), run(true, args)
			if got != want {
				t.Errorf("intentgate %s\nhook root:\n%s\nfull tree:\n%s", strings.Join(args, " "), got, want)
			}
			if !strings.Contains(want, c.want) {
				t.Errorf("the full tree's answer to intentgate %s lacks %q:\n%s", strings.Join(args, " "), c.want, want)
			}
		})
	}
	if n := len(command([]string{"hook", "claude-code"}, nil, nil, nil).Commands()); n != 1 {
		t.Errorf("the hook root has %d subcommands, want only hook", n)
	}
	if n := len(command([]string{"trace"}, nil, nil, nil).Commands()); n < 10 {
		t.Errorf("the root for other commands has %d subcommands, want the whole tree", n)
	}
}
