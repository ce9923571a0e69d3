package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/intentgate/intentgate/internal/fsx"
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
// it links to. `go run ./cmd/intentgate` builds intentgate alone (into a
// temporary directory or go's build cache): there intentgate-full is built
// too, from the module it is run in, into intentgate's directory in the
// user's cache (go build relinks it only when its sources changed).
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
	if built, ok, err := goRunFull(self); ok {
		return built, err
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

// goRunFull builds intentgate-full when self is a program `go run` built:
// in a go-build* temporary directory (.../go-build*/bNNN/exe/NAME) or in
// go's build cache. ok is false when self is neither.
func goRunFull(self string) (full string, ok bool, err error) {
	exe := filepath.Dir(self)
	b := filepath.Dir(exe)
	inTemp := filepath.Base(exe) == "exe" && strings.HasPrefix(filepath.Base(b), "b") &&
		strings.HasPrefix(filepath.Base(filepath.Dir(b)), "go-build")
	env, err := exec.Command("go", "env", "GOCACHE", "GOMOD").Output()
	if err != nil {
		return "", inTemp, fmt.Errorf("`go run` built intentgate alone, and go, to build intentgate-full, does not run: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(env)), "\n")
	if len(lines) != 2 {
		return "", inTemp, fmt.Errorf("`go env GOCACHE GOMOD` printed %q", env)
	}
	gocache, gomod := lines[0], lines[1]
	if rel, err := filepath.Rel(gocache, self); !inTemp && (err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
		return "", false, nil
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path == "" || gomod == "" || gomod == os.DevNull {
		return "", true, errors.New("`go run` built intentgate alone, outside its module: build intentgate-full beside it with `go install ./cmd/...` in intentgate's source tree")
	}
	args := []string{"build"}
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
	// One intentgate-full per module checkout and build settings.
	key := sha256.Sum256([]byte(gomod + "\x00" + runtime.GOOS + "/" + runtime.GOARCH + "\x00" + strings.Join(args, "\x00")))
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", true, fmt.Errorf("`go run` built intentgate alone, and there is no cache directory to build intentgate-full in: %v", err)
	}
	full = filepath.Join(cache, "intentgate", "go-run", hex.EncodeToString(key[:8]), selfexe.Exe(selfexe.FullName))
	args = append(args, "-o", full, bi.Main.Path+"/cmd/"+selfexe.FullName)
	// Two first `go run`s at once must not link over each other's
	// output while one of them runs it: the build runs under a lock.
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return "", true, fmt.Errorf("`go run` built intentgate alone, and the directory to build intentgate-full in cannot be made: %v", err)
	}
	lock, err := os.OpenFile(full+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", true, fmt.Errorf("`go run` built intentgate alone, and the lock for building intentgate-full cannot be opened: %v", err)
	}
	defer lock.Close()
	if err := fsx.LockFile(lock); err != nil {
		return "", true, fmt.Errorf("`go run` built intentgate alone, and the lock for building intentgate-full cannot be taken (%s): %v", lock.Name(), err)
	}
	defer fsx.UnlockFile(lock)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return "", true, fmt.Errorf("`go run` built intentgate alone, and building intentgate-full failed (go %s: %v):\n%s", strings.Join(args, " "), err, out)
	}
	return full, true, nil
}
