package engine

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Honest writers replace files atomically while others read them; a reader
// must see the old or the new content, never a refusal that takes the
// replace for a symlink swap.
func TestReadDuringAtomicReplace(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "f.txt"), []byte("v0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c := &Call{Tool: "write_to_file"}
			if _, err := w.Edit(c, "src/f.txt", func([]byte, bool) ([]byte, error) {
				return []byte{'v', byte('0' + i%10), '\n'}, nil
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 2000; i++ {
		b, err := w.ReadFile("src/f.txt")
		if err != nil || len(b) != 3 {
			t.Errorf("read %d during replaces: %q, %v", i, b, err)
			break
		}
	}
	close(stop)
	wg.Wait()
}
