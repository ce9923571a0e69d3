package orchestration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// storeIntents is a valid intents file with one intent, id; its status sits at
// line 4, column 13.
func storeIntents(id, status string) string {
	return yamlLines(
		"active_intents:",
		"  - id: "+id,
		"    name: test",
		"    status: "+status,
		"    owned_scope: [src/**]",
	)
}

func storeWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// storeRenameOver saves the way editors do: a new file renamed over the old.
func storeRenameOver(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".swp"
	storeWrite(t, tmp, data)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func storeIDs(t *testing.T, s *IntentStore) string {
	t.Helper()
	set, err := s.Current()
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	return strings.Join(set.IDs(), ",")
}

func TestOpenIntentStoreFailsClosed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "active_intents.yaml")
	if s, err := OpenIntentStore(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenIntentStore(missing) = %v, %v; want fs.ErrNotExist", s, err)
	}
	storeWrite(t, path, storeIntents("INT-1", "DONE"))
	_, err := OpenIntentStore(path)
	var errs IntentsErrors
	if !errors.As(err, &errs) || errs[0].Line != 4 || errs[0].Column != 13 {
		t.Errorf("OpenIntentStore(invalid) = %v, want an error at 4:13", err)
	}
}

func TestIntentStoreReload(t *testing.T) {
	// Closing the store first proves that correctness does not depend on the
	// watcher: each call checks the file itself.
	for _, watch := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "active_intents.yaml")
			storeWrite(t, path, storeIntents("INT-1", "IN_PROGRESS"))
			s, err := OpenIntentStore(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !watch {
				s.Close()
			}

			steps := []struct {
				name    string
				edit    func()
				ids     string // "" means Current must fail
				problem string // substring of Problem(), "" for nil
			}{
				{"initial", func() {}, "INT-1", ""},
				{"bad edit in place keeps last good", func() {
					storeWrite(t, path, storeIntents("INT-2", "FINISHED"))
				}, "INT-1", path + ":4:13: unknown status \"FINISHED\""},
				{"good edit by rename", func() {
					storeRenameOver(t, path, storeIntents("INT-2", "PENDING"))
				}, "INT-2", ""},
				{"same size same mtime in place", func() {
					fi, err := os.Stat(path)
					if err != nil {
						t.Fatal(err)
					}
					storeWrite(t, path, storeIntents("INT-3", "PENDING"))
					if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
						t.Fatal(err)
					}
				}, "INT-3", ""},
				{"bad edit by rename", func() {
					storeRenameOver(t, path, "active_intents: [\n")
				}, "INT-3", path + ":1: invalid YAML"},
				{"delete fails closed", func() {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}, "", "missing"},
				{"reappears broken: no return to the set before the deletion", func() {
					storeRenameOver(t, path, storeIntents("INT-9", "WRONG"))
				}, "", ":4:13: unknown status"},
				{"reappears", func() {
					storeRenameOver(t, path, storeIntents("INT-4", "BLOCKED"))
				}, "INT-4", ""},
				{"atomic replace", func() {
					storeRenameOver(t, path, storeIntents("INT-5", "COMPLETED"))
				}, "INT-5", ""},
			}
			for _, st := range steps {
				st.edit()
				set, err := s.Current()
				switch {
				case st.ids == "" && err == nil:
					t.Errorf("%s: Current() = %v, want an error", st.name, set.IDs())
				case st.ids == "" && st.name == "delete fails closed" && !errors.Is(err, fs.ErrNotExist):
					t.Errorf("%s: Current() error = %v, want fs.ErrNotExist", st.name, err)
				case st.ids != "" && err != nil:
					t.Errorf("%s: Current() error = %v", st.name, err)
				case st.ids != "" && strings.Join(set.IDs(), ",") != st.ids:
					t.Errorf("%s: Current() = %v, want %s", st.name, set.IDs(), st.ids)
				}
				p := s.Problem()
				if (p == nil) != (st.problem == "") || (p != nil && !strings.Contains(p.Error(), st.problem)) {
					t.Errorf("%s: Problem() = %v, want %q", st.name, p, st.problem)
				}
			}
		})
	}
}

// TestIntentStoreWatcher checks that the watcher alone, without any call
// that stats the file, picks up edits: what a resident daemon relies on to
// report a bad edit as soon as it is saved.
func TestIntentStoreWatcher(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "active_intents.yaml")
	storeWrite(t, path, storeIntents("INT-1", "IN_PROGRESS"))
	s, err := OpenIntentStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.w != nil {
		t.Fatal("OpenIntentStore started a watcher; only Watch may")
	}
	s.Watch()
	if s.w == nil {
		t.Skip("fsnotify unavailable here; the stat check is covered by TestIntentStoreReload")
	}
	// peek reads the state without refreshing it.
	peek := func() (string, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return strings.Join(s.good.IDs(), ","), s.problem
	}
	wait := func(what string, ok func(ids string, problem error) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ids, p := peek()
			if ok(ids, p) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("watcher did not notice %s: ids %q, problem %v", what, ids, p)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	storeRenameOver(t, path, storeIntents("INT-1", "NOPE"))
	wait("a bad edit", func(ids string, p error) bool {
		return ids == "INT-1" && p != nil && strings.Contains(p.Error(), ":4:13:")
	})
	storeWrite(t, path, storeIntents("INT-2", "PENDING"))
	wait("a good edit", func(ids string, p error) bool { return ids == "INT-2" && p == nil })
	// Other files in the directory do not matter.
	storeWrite(t, filepath.Join(dir, "agent_trace.jsonl"), "{}\n")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	wait("a deletion", func(ids string, p error) bool { return errors.Is(p, fs.ErrNotExist) })
}

func TestIntentStoreConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "active_intents.yaml")
	storeWrite(t, path, storeIntents("INT-0", "IN_PROGRESS"))
	s, err := OpenIntentStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				set, err := s.Current()
				if err != nil {
					t.Errorf("Current: %v", err)
					return
				}
				if ids := set.IDs(); len(ids) != 1 || !strings.HasPrefix(ids[0], "INT-") {
					t.Errorf("Current() = %v", ids)
					return
				}
				_ = s.Problem()
			}
		}()
	}
	for i := 1; i <= 50; i++ {
		storeRenameOver(t, path, storeIntents(fmt.Sprintf("INT-%d", i), "PENDING"))
	}
	close(stop)
	wg.Wait()
	if got := storeIDs(t, s); got != "INT-50" {
		t.Errorf("after the edits Current() = %s, want INT-50", got)
	}
}
