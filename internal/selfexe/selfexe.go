// Package selfexe names the programs of one intentgate installation, which
// `go install ./cmd/...` puts in one directory: intentgate (the command
// line, which answers hook events itself and runs intentgate-full for every
// other command), intentgate-full (every command) and intentgate-hook (the
// lean hook program). A command line written for an agent names intentgate,
// whichever of the three writes it.
package selfexe

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Program names, without .exe.
const (
	Name     = "intentgate"
	FullName = "intentgate-full"
	HookName = "intentgate-hook"
)

// Exe is name with the executable suffix of this platform.
func Exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// program is base's program name: base without a .exe suffix (any case)
// on Windows.
func program(base string) string {
	if runtime.GOOS == "windows" {
		if ext := filepath.Ext(base); strings.EqualFold(ext, ".exe") {
			return strings.ToLower(strings.TrimSuffix(base, ext))
		}
	}
	return base
}

// Intentgate is the path of the intentgate this process belongs to: this
// executable, or, in intentgate-hook and intentgate-full, the intentgate
// beside it. intentgate-hook has commands of its own only for hook events;
// intentgate-full has all of them, so where no intentgate lies beside it,
// it names itself.
func Intentgate() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return IntentgateOf(self), nil
}

// IntentgateOf is Intentgate for the executable self.
func IntentgateOf(self string) string {
	dir, base := filepath.Split(self)
	front := filepath.Join(dir, Exe(Name))
	switch program(base) {
	case HookName:
		return front
	case FullName:
		if fi, err := os.Stat(front); err == nil && fi.Mode().IsRegular() {
			return front
		}
	}
	return self
}

// Beside is the paths of intentgate and intentgate-full in self's
// directory: the programs of self's installation that run a daemon.
func Beside(self string) []string {
	dir := filepath.Dir(self)
	return []string{filepath.Join(dir, Exe(Name)), filepath.Join(dir, Exe(FullName))}
}
