package adapter

import (
	"strings"
	"testing"
)

// UnwrapExecCommandLine undoes ExecCommandLine exactly, for the session it
// was made for, and for nothing else.
func TestUnwrapExecCommandLine(t *testing.T) {
	for _, cmd := range []string{"", "echo hi", `it's "q" \ $x`, "'", "''", "a'b'c", "line1\nline2", " lead and trail ", "-- --session x"} {
		line := ExecCommandLine("s-1", "/w s'p", cmd)
		got, ok := UnwrapExecCommandLine("s-1", line)
		if !ok || got != cmd {
			t.Errorf("unwrap of %q: %q, %v", cmd, got, ok)
		}
		if _, ok := UnwrapExecCommandLine("s-2", line); ok {
			t.Errorf("%q unwrapped for another session", line)
		}
		if _, ok := UnwrapExecCommandLine("s-1", line+"; rm -rf x"); ok {
			t.Errorf("%q with more after it unwrapped", line)
		}
	}
	for _, line := range []string{"", "echo hi", "'x' exec --session 's' --workspace 'w' -- 'sh' -c echo", "x exec --session 's'"} {
		if _, ok := UnwrapExecCommandLine("s", line); ok {
			t.Errorf("%q unwrapped", line)
		}
	}
}

func FuzzUnwrapExecCommandLine(f *testing.F) {
	f.Add("s", "echo 'a' \"b\"")
	f.Add("", "'")
	f.Fuzz(func(t *testing.T, session, cmd string) {
		if strings.ContainsRune(cmd, 0) {
			return
		}
		got, ok := UnwrapExecCommandLine(session, ExecCommandLine(session, "/ws", cmd))
		if !ok || got != cmd {
			t.Fatalf("round trip of %q: %q, %v", cmd, got, ok)
		}
		// Any line at all: no panic, and a result only for a wrapping.
		if inner, ok := UnwrapExecCommandLine(session, cmd); ok && ExecCommandLine(session, "/ws", inner) == "" {
			t.Fatal("unreachable")
		}
	})
}
