//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/journal"
)

// faultDispatch runs calls (tool JSON objects) as one dispatch session with
// INTENTGATE_TEST_FAULT=fault in the child, and returns its results and its
// error (a *exec.ExitError when the fault killed it).
func faultDispatch(t *testing.T, ws, fault string, calls ...string) ([]result, error) {
	t.Helper()
	var in strings.Builder
	for i, c := range calls {
		fmt.Fprintf(&in, `{"id":"%d","session":"fault","agent":{"name":"t","model":"test/model"},%s`+"\n", i, c[1:])
	}
	cmd := exec.Command(e2eBinary(t), "dispatch", "-w", ws)
	cmd.Stdin = strings.NewReader(in.String())
	cmd.Env = append(os.Environ(), "INTENTGATE_TEST_FAULT="+fault)
	out, err := cmd.Output()
	var res []result
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		var r result
		if jerr := json.Unmarshal([]byte(l), &r); jerr != nil {
			t.Fatalf("result %q: %v", l, jerr)
		}
		res = append(res, r)
	}
	return res, err
}

// One failed ledger fsync: the write is acknowledged once the retry's sync
// succeeds, the ledger holds its record exactly once, and verify says INTACT
// (before the fix the retry appended the record again and verify reported a
// duplicate from then on).
func TestFaultLedgerFsyncNoDuplicate(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, nil)
	res, err := faultDispatch(t, ws, "ledger-fsync=1", selectCall, writeCall("src/a.txt", "one\n"), writeCall("src/b.txt", "two\n"))
	if err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	for i, r := range res {
		if !r.OK {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	n := 0
	for _, l := range faultLedgerLines(t, ws) {
		if strings.Contains(l, `"path":"src/a.txt"`) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("src/a.txt has %d records, want 1", n)
	}
	if out, code := runIG(t, "trace", "verify", "-w", ws); code != 0 || !strings.Contains(out, "INTACT") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
}

// A crash after the new content is written but before the rename leaves the
// user's tree untouched: the temp file is under .orchestration/tmp, never
// beside the target, and the next open removes it.
func TestFaultCrashBeforeRenameLeavesNoTemp(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/f.txt": "old\n"})
	_, err := faultDispatch(t, ws, "crash-before-rename", selectCall, readCall("src/f.txt"), writeCall("src/f.txt", "new\n"))
	if _, killed := err.(*exec.ExitError); !killed {
		t.Fatalf("dispatch with a crash point: err %v, want killed", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src", "f.txt")); string(b) != "old\n" {
		t.Fatalf("src/f.txt = %q after a crash before the rename", b)
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "src"))
	for _, e := range entries {
		if e.Name() != "f.txt" {
			t.Errorf("the crash left %s in the user's tree", e.Name())
		}
	}
	tmp := filepath.Join(ws, ".orchestration", "tmp")
	if left, _ := os.ReadDir(tmp); len(left) != 1 {
		t.Fatalf(".orchestration/tmp holds %d files after the crash, want the 1 temp file", len(left))
	}
	if _, err := faultDispatch(t, ws, "", selectCall); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the next open left %d temp files in .orchestration/tmp", len(left))
	}
}

// A kill between the rename that makes a change and the ledger append that
// records it: verify reports the change as made without a record (not as an
// ordinary edit), and the next open records it, flagged as recovered.
func TestFaultCrashBetweenChangeAndRecord(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/f.txt": "old\n"})
	_, err := faultDispatch(t, ws, "crash-after-rename", selectCall, readCall("src/f.txt"), writeCall("src/f.txt", "new\n"))
	if _, killed := err.(*exec.ExitError); !killed {
		t.Fatalf("dispatch with a crash point: err %v, want killed", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src", "f.txt")); string(b) != "new\n" {
		t.Fatalf("src/f.txt = %q; the crash point is after the rename", b)
	}
	for _, l := range faultLedgerLines(t, ws) {
		if strings.Contains(l, `"path":"src/f.txt"`) && strings.Contains(l, `"write_to_file"`) && !strings.Contains(l, `"read_file"`) {
			t.Fatalf("the change was recorded before the crash point:\n%s", l)
		}
	}
	// The entry is in the killed process's slot, pending.
	slots := journalFiles(t, ws, ".slot")
	if len(slots) != 1 {
		t.Fatalf("journal slots after the crash: %v, want 1", slots)
	}
	b, _ := os.ReadFile(slots[0])
	if entry, st := journal.ParseSlot(b); st != journal.InFlight || !strings.Contains(string(entry), `"path":"src/f.txt"`) {
		t.Fatalf("the slot after the crash: state %v, entry %q; want src/f.txt pending", st, entry)
	}
	out, code := runIG(t, "trace", "verify", "-w", ws)
	if code != 1 || !strings.Contains(out, "CHANGED WITHOUT A RECORD: src/f.txt") {
		t.Fatalf("verify after the crash: exit %d, want 1 naming the unrecorded change:\n%s", code, out)
	}
	// The next open records it.
	if _, err := faultDispatch(t, ws, "", selectCall); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range faultLedgerLines(t, ws) {
		if strings.Contains(l, `"path":"src/f.txt"`) && strings.Contains(l, `"recovered"`) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d recovered records of src/f.txt, want 1", n)
	}
	out, code = runIG(t, "trace", "verify", "-w", ws)
	if code != 0 || !strings.Contains(out, "recorded after a crash") {
		t.Fatalf("verify after recovery: exit %d\n%s", code, out)
	}
	if left := journalFiles(t, ws, ".slot"); len(left) != 0 {
		t.Errorf("slots left after recovery: %v", left)
	}
	// A second open records nothing more.
	faultDispatch(t, ws, "", selectCall)
	if lines := faultLedgerLines(t, ws); strings.Count(strings.Join(lines, "\n"), `"recovered"`) != 1 {
		t.Errorf("a second open recorded the change again")
	}
}

// A governed write syncs its directory at the same time as its ledger record
// (one round of the disk, not two). A file system that does not commit the
// two together may keep the record and lose the rename in a crash: the test
// makes that state (a kill after the record, the file put back as it was)
// and the next open records the file as it is, so the ledger's last word on
// it is true again and verify finds no drift.
func TestFaultRecordKeptRenameLost(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/f.txt": "old\n"})
	_, err := faultDispatch(t, ws, "crash-after-record", selectCall, readCall("src/f.txt"), writeCall("src/f.txt", "new\n"))
	if _, killed := err.(*exec.ExitError); !killed {
		t.Fatalf("dispatch with a crash point: err %v, want killed", err)
	}
	recorded := false
	for _, l := range faultLedgerLines(t, ws) {
		if strings.Contains(l, `"path":"src/f.txt"`) && strings.Contains(l, `"write_to_file"`) && strings.Contains(l, `"modify"`) {
			recorded = true
		}
	}
	if !recorded {
		t.Fatal("the crash point is after the record, but the ledger has no record of the write")
	}
	if left, _ := os.ReadDir(filepath.Join(ws, ".orchestration", "journal")); len(left) != 1 {
		t.Fatalf("the journal holds %d entries after the crash, want the write's 1", len(left))
	}
	// What a lost rename leaves: the old content.
	if err := os.WriteFile(filepath.Join(ws, "src", "f.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := faultDispatch(t, ws, "", selectCall); err != nil {
		t.Fatal(err)
	}
	var lost []string
	for _, l := range faultLedgerLines(t, ws) {
		if strings.Contains(l, `"path":"src/f.txt"`) && strings.Contains(l, "lost in the crash") {
			lost = append(lost, l)
		}
	}
	// sha256("old\n"), computed by hand with sha256sum.
	const oldSum = "01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee"
	if len(lost) != 1 || !strings.Contains(lost[0], oldSum) {
		t.Fatalf("records of the lost change: %q, want 1 with the old content's hash", lost)
	}
	left, _ := os.ReadDir(filepath.Join(ws, ".orchestration", "journal"))
	for _, e := range left {
		if strings.HasSuffix(e.Name(), ".json") || strings.HasSuffix(e.Name(), ".slot") {
			t.Errorf("the next open left the journal entry %s", e.Name())
		}
	}
	if out, code := runIG(t, "trace", "verify", "-w", ws); code != 0 {
		t.Fatalf("verify after recovery: exit %d\n%s", code, out)
	}
	// A second open records nothing more.
	faultDispatch(t, ws, "", selectCall)
	if lines := faultLedgerLines(t, ws); strings.Count(strings.Join(lines, "\n"), "lost in the crash") != 1 {
		t.Errorf("a second open recorded the lost change again")
	}
}

// journalFiles lists the files of ws's journal directory ending in suffix.
func journalFiles(t *testing.T, ws, suffix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(ws, ".orchestration", "journal", "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A clean dispatch leaves no slot behind: its writes' entries are done, and
// the slot is removed when the process ends.
func TestDispatchLeavesNoJournalSlot(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, nil)
	res, err := faultDispatch(t, ws, "", selectCall, writeCall("src/a.txt", "one\n"), writeCall("src/b.txt", "two\n"), writeCall("src/a.txt", "three\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.OK {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(ws, ".orchestration", "journal")); len(left) != 0 {
		t.Fatalf("the journal holds %d files after a clean dispatch, want none", len(left))
	}
}

// An entry an older build left (one JSON file per change, before slots) is
// still recovered: the crash leaves the write's entry in a slot, which the
// test turns into the file an older build wrote for it (the same JSON, named
// by engine.JournalName); the next open records the change once and removes
// the file.
func TestFaultRecoversAnOlderBuildsEntry(t *testing.T) {
	ws := e2eWorkspace(t, e2eIntents, map[string]string{"src/f.txt": "old\n"})
	_, err := faultDispatch(t, ws, "crash-after-rename", selectCall, readCall("src/f.txt"), writeCall("src/f.txt", "new\n"))
	if _, killed := err.(*exec.ExitError); !killed {
		t.Fatalf("dispatch with a crash point: err %v, want killed", err)
	}
	slots := journalFiles(t, ws, ".slot")
	if len(slots) != 1 {
		t.Fatalf("journal slots after the crash: %v, want 1", slots)
	}
	b, _ := os.ReadFile(slots[0])
	entry, st := journal.ParseSlot(b)
	if st != journal.InFlight {
		t.Fatalf("slot state %v, want pending", st)
	}
	var e struct {
		Path    string `json:"path"`
		Session string `json:"session"`
		CallID  string `json:"call_id"`
	}
	if err := json.Unmarshal(entry, &e); err != nil || e.Path != "src/f.txt" {
		t.Fatalf("entry %q: %v", entry, err)
	}
	old := filepath.Join(ws, ".orchestration", "journal", engine.JournalName(e.CallID, e.Session, e.Path))
	if err := os.WriteFile(old, entry, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(slots[0]); err != nil {
		t.Fatal(err)
	}
	if out, code := runIG(t, "trace", "verify", "-w", ws); code != 1 || !strings.Contains(out, "CHANGED WITHOUT A RECORD: src/f.txt") {
		t.Fatalf("verify with the older entry: exit %d, want 1 naming the change:\n%s", code, out)
	}
	if _, err := faultDispatch(t, ws, "", selectCall); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(faultLedgerLines(t, ws), "\n"), `"recovered"`); n != 1 {
		t.Fatalf("%d recovered records, want 1", n)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the older entry is still there after recovery: %v", err)
	}
	if out, code := runIG(t, "trace", "verify", "-w", ws); code != 0 {
		t.Fatalf("verify after recovery: exit %d\n%s", code, out)
	}
}
