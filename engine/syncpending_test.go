package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A rename's directory fsync left to the call (Edit under Dispatch) is done
// before Dispatch answers, by the post-hook that runs it alongside its own
// fsync or by Dispatch itself; Edit outside Dispatch syncs at once and
// leaves nothing pending.
func TestDirectorySyncsAreDoneBeforeDispatchAnswers(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(c *Call, body string) {
		t.Helper()
		if _, err := w.Edit(c, "src/a.txt", func([]byte, bool) ([]byte, error) { return []byte(body), nil }); err != nil {
			t.Fatal(err)
		}
	}

	direct := &Call{ID: "1", Tool: "w", WS: w}
	write(direct, "one\n")
	if len(direct.dirs) != 0 {
		t.Fatalf("Edit outside Dispatch left %d directory syncs pending", len(direct.dirs))
	}

	for _, hook := range []bool{false, true} {
		reg := NewRegistry()
		var during int
		reg.Register(Spec{Name: "w", Group: GroupEdit, Tool: ToolFunc(func(ctx context.Context, c *Call) (*Result, error) {
			write(c, "two\n")
			during = len(c.dirs)
			return &Result{}, nil
		})})
		e := New(reg)
		var synced error = os.ErrInvalid
		if hook {
			e.After(PostFunc(func(ctx context.Context, c *Call, r *Result) error {
				synced = c.SyncPending()
				return nil
			}))
		}
		c := &Call{ID: "2", Tool: "w", WS: w}
		if _, err := e.Dispatch(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if during != 1 {
			t.Errorf("hook=%v: the tool's rename left %d directory syncs to the call, want 1", hook, during)
		}
		if len(c.dirs) != 0 {
			t.Errorf("hook=%v: Dispatch answered with %d directory syncs pending", hook, len(c.dirs))
		}
		if hook && synced != nil {
			t.Errorf("the post-hook's SyncPending: %v", synced)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "src", "a.txt")); string(b) != "two\n" {
		t.Fatalf("src/a.txt = %q", b)
	}
}
