//go:build linux

package main

import (
	"testing"
)

// Two dispatch processes serve one session. Each keeps the session's
// derived changes (the hashes of what it wrote) in memory for a while, and
// hands its hooks the session as it holds it. A change the other process
// writes meanwhile (a new intent, durable) must be seen at once by the
// first process's next call, with its own unwritten changes still on top:
// the intent's scope applies, and the file it wrote may be written again
// without a read.
func TestSharedSessionSeesOtherProcessChange(t *testing.T) {
	e := newAtkEnv(t, atkOpts{})
	a, b := e.start(), e.start()
	defer a.close()
	defer b.close()
	a.selectIntent("INT-001")
	if res := a.send("write_to_file", map[string]any{"path": "src/a.txt", "content": "one\n"}); !res.OK {
		t.Fatalf("A's first write: %+v %+v", res.Denial, res.Error)
	}
	// Outside INT-001's scope: refused while it is the session's intent.
	if res := a.send("write_to_file", map[string]any{"path": "docs/x.txt", "content": "x\n"}); res.OK || res.Denial == nil {
		t.Fatalf("A wrote outside INT-001's scope: %+v", res)
	}
	// The other process selects another intent for the same session.
	b.selectIntent("INT-ALL")
	// A sees it: the same write is now in scope.
	if res := a.send("write_to_file", map[string]any{"path": "docs/x.txt", "content": "x\n"}); !res.OK {
		t.Fatalf("A after B selected INT-ALL: %+v %+v", res.Denial, res.Error)
	}
	// And A's own change, not written to the session file yet when B
	// wrote it, is still there: src/a.txt may be overwritten unread.
	if res := a.send("write_to_file", map[string]any{"path": "src/a.txt", "content": "two\n"}); !res.OK {
		t.Fatalf("A's second write of src/a.txt: %+v %+v", res.Denial, res.Error)
	}
	// A file the session never read nor wrote is still refused.
	e.write("src/other.txt", "theirs\n")
	if res := a.send("write_to_file", map[string]any{"path": "src/other.txt", "content": "mine\n"}); res.OK || res.Denial == nil || string(res.Denial.Code) != "NOT_READ" {
		t.Fatalf("A overwrote a file the session never read: %+v", res)
	}
}
