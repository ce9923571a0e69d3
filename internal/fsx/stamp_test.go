package fsx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// settledFile returns a File whose clock runs well ahead of the real one,
// so that a file written just now counts as settled (its stamp proves it
// unchanged) without the test waiting.
func settledFile(path string, flags int) *File {
	f := NewFile(path, flags)
	f.now = func() time.Time { return time.Now().Add(10 * time.Second) }
	return f
}

func mustRead(t *testing.T, f *File) ([]byte, bool) {
	t.Helper()
	data, fresh, err := f.Read()
	if err != nil {
		t.Fatalf("Read(%s): %v", f.Path(), err)
	}
	return data, fresh
}

// stampsKept reports whether this platform and file system keep a file
// between reads at all; elsewhere every Read reads.
func stampsKept(t *testing.T, dir string) bool {
	t.Helper()
	p := filepath.Join(dir, "probe")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := settledFile(p, 0)
	mustRead(t, f)
	_, fresh := mustRead(t, f)
	return !fresh
}

func TestFileSeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	if runtime.GOOS == "linux" && !stampsKept(t, dir) {
		t.Fatalf("a settled, unchanged file on %s was read again: stamps are never trusted here", dir)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	type step struct {
		name   string
		change func(t *testing.T, p string)
		want   string // "" when the Read must fail
	}
	steps := []step{
		{"same size, in place, mtime set back", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("scope: b/**\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}, "scope: b/**\n"},
		{"renamed over, same size, mtime set back", func(t *testing.T, p string) {
			tmp := p + ".new"
			if err := os.WriteFile(tmp, []byte("scope: c/**\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(tmp, old, old); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		}, "scope: c/**\n"},
		{"mode only", func(t *testing.T, p string) {
			if err := os.Chmod(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "scope: c/**\n"},
		{"removed", func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"back again", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte("scope: d/**\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "scope: d/**\n"},
	}
	p := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(p, []byte("scope: a/**\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	f := settledFile(p, NoFollow)
	if got, fresh := mustRead(t, f); string(got) != "scope: a/**\n" || !fresh {
		t.Fatalf("first Read = %q, fresh %v", got, fresh)
	}
	present := true
	for _, st := range steps {
		if runtime.GOOS == "linux" && present {
			// Kept: the stat alone answers, the file is not read.
			if got, fresh := mustRead(t, f); fresh {
				t.Fatalf("before %s: an unchanged file was read again (%q)", st.name, got)
			}
		}
		st.change(t, p)
		got, fresh, err := f.Read()
		present = st.want != ""
		if st.want == "" {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("after %s: Read = %q, %v; want a not-exist error", st.name, got, err)
			}
			continue
		}
		if err != nil || string(got) != st.want || !fresh {
			t.Fatalf("after %s: Read = %q, fresh %v, %v; want %q read afresh", st.name, got, fresh, err, st.want)
		}
	}
}

func TestFileRefusesWhatIsNotAPlainFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "link")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if data, _, err := NewFile(link, NoFollow).Read(); err == nil {
			t.Errorf("Read of a symlink with NoFollow = %q, want an error", data)
		}
		if data, _, err := NewFile(link, 0).Read(); err != nil || string(data) != "x" {
			t.Errorf("Read of a symlink without NoFollow = %q, %v; want its target's bytes", data, err)
		}
	}
	if data, _, err := NewFile(dir, 0).Read(); err == nil {
		t.Errorf("Read of a directory = %q, want an error", data)
	}
}

func TestSeenTrustsOnlySettledStamps(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	settle := 20 * time.Millisecond
	st := func(ctime time.Time) Stamp {
		return Stamp{dev: 1, ino: 2, mode: 0o100644, size: 10, mtime: 5, ctime: ctime.UnixNano(), known: true}
	}
	cases := []struct {
		name   string
		stamp  Stamp
		settle time.Duration
		at     time.Time
		want   bool
	}{
		{"settled", st(start.Add(-time.Second)), settle, start.Add(time.Millisecond), true},
		{"changed within the settle time before the read", st(start.Add(-5 * time.Millisecond)), settle, start.Add(time.Millisecond), false},
		{"changed after the read started", st(start.Add(time.Millisecond)), settle, start.Add(2 * time.Millisecond), false},
		{"file system without a known clock", st(start.Add(-time.Hour)), -1, start.Add(time.Millisecond), false},
		{"past TrustFor", st(start.Add(-time.Hour)), settle, start.Add(TrustFor), false},
		{"stamp unknown", Stamp{}, settle, start.Add(time.Millisecond), false},
	}
	for _, c := range cases {
		var s Seen
		s.Note(c.stamp, start, c.settle)
		if got := s.Holds(c.stamp, c.at); got != c.want {
			t.Errorf("%s: Holds = %v, want %v", c.name, got, c.want)
		}
	}
	// Any field that differs is a change.
	var s Seen
	base := st(start.Add(-time.Hour))
	s.Note(base, start, settle)
	for i, other := range []Stamp{
		func() Stamp { x := base; x.dev++; return x }(),
		func() Stamp { x := base; x.ino++; return x }(),
		func() Stamp { x := base; x.mode ^= 0o22; return x }(),
		func() Stamp { x := base; x.size++; return x }(),
		func() Stamp { x := base; x.mtime++; return x }(),
		func() Stamp { x := base; x.ctime++; return x }(),
	} {
		if s.Holds(other, start) {
			t.Errorf("change %d: Holds = true for a stamp that differs", i)
		}
	}
}
