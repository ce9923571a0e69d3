package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// StartSync and SyncFiles report, per file, what fsync(2) of that file
// reports: nil for files and directories that sync, the same error for a
// file that cannot be synced (a pipe) or is closed, whichever way the
// fsyncs ran.
func TestSyncFilesReportsPerFile(t *testing.T) {
	dir := t.TempDir()
	var files []*os.File
	for i := range 3 {
		f, err := os.Create(filepath.Join(dir, "f"+string(rune('a'+i))))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write([]byte("data\n")); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	files = append(files, d)
	for _, errs := range [][]error{SyncFiles(files...), StartSync(files...).Wait()} {
		if len(errs) != len(files) {
			t.Fatalf("%d errors for %d files", len(errs), len(files))
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("%s: %v", files[i].Name(), err)
			}
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	closed, err := os.Create(filepath.Join(dir, "closed"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	mixed := []*os.File{files[0], w, files[1], closed}
	want := []error{nil, w.Sync(), nil, closed.Sync()}
	if want[1] == nil || want[3] == nil {
		t.Fatalf("fsync of a pipe and of a closed file succeeded: %v, %v", want[1], want[3])
	}
	errs := StartSync(mixed...).Wait()
	for i := range mixed {
		switch {
		case (errs[i] == nil) != (want[i] == nil):
			t.Errorf("file %d: got %v, want %v", i, errs[i], want[i])
		case want[i] != nil && !errors.Is(errs[i], errors.Unwrap(want[i])) && errs[i].Error() != want[i].Error():
			t.Errorf("file %d: got %v, want %v", i, errs[i], want[i])
		}
	}
}
