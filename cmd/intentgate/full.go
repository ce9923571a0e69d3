package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/intentgate/intentgate/internal/selfexe"
)

// runFull runs intentgate-full with args and returns its exit status (on
// Unix it does not return: the process becomes intentgate-full).
func runFull(args []string, errw io.Writer) int {
	full, err := findFull()
	if err != nil {
		fmt.Fprintln(errw, "intentgate:", err)
		return 1
	}
	if err := execFull(full, args); err != nil {
		fmt.Fprintf(errw, "intentgate: running %s: %v\n", full, err)
		return 1
	}
	return 0 // not reached where execFull replaces the process
}

// findFull is intentgate-full beside this executable, or beside the file
// it links to. `go run ./cmd/intentgate` builds intentgate alone, in a
// directory of its own that go removes afterwards: there intentgate-full
// is built into the same directory, from the module it is run in.
func findFull() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the path of this executable is unknown (%v), so intentgate-full, which runs every command but hook, cannot be found beside it", err)
	}
	name := selfexe.Exe(selfexe.FullName)
	full := filepath.Join(filepath.Dir(self), name)
	dirs := []string{filepath.Dir(self)}
	if real, err := filepath.EvalSymlinks(self); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); isProgram(p) {
			return p, nil
		}
	}
	if goRunDir(self) {
		return full, buildFull(full)
	}
	return "", fmt.Errorf("%s is missing: intentgate answers hook events itself and runs %s, installed beside it, for every other command; "+
		"install both with `go install ./cmd/...` in intentgate's source tree, or build it there with `go build -o %s ./cmd/intentgate-full`",
		full, selfexe.FullName, full)
}

// isProgram reports whether p is a regular file that can be executed.
func isProgram(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && (isWindows || fi.Mode().Perm()&0o111 != 0)
}

// goRunDir reports whether self is where `go run` puts the program it
// builds: .../go-build*/bNNN/exe/NAME.
func goRunDir(self string) bool {
	exe := filepath.Dir(self)
	b := filepath.Dir(exe)
	return filepath.Base(exe) == "exe" && strings.HasPrefix(filepath.Base(b), "b") &&
		strings.HasPrefix(filepath.Base(filepath.Dir(b)), "go-build")
}

// buildFull builds intentgate-full at path with the build settings this
// program was built with, from this program's module, as `go run` built
// this one.
func buildFull(path string) error {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path == "" {
		return fmt.Errorf("%s is missing and this program carries no build information to build it from; build it with `go build -o %s ./cmd/intentgate-full`", path, path)
	}
	args := []string{"build", "-o", path}
	for _, s := range bi.Settings {
		switch s.Key {
		case "-tags", "-ldflags", "-gcflags":
			args = append(args, s.Key+"="+s.Value)
		case "-race", "-trimpath":
			if s.Value == "true" {
				args = append(args, s.Key)
			}
		}
	}
	args = append(args, bi.Main.Path+"/cmd/"+selfexe.FullName)
	cmd := exec.Command("go", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("`go run` built intentgate alone, and building intentgate-full beside it failed (go %s: %v):\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
