package install

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/intentgate/intentgate/internal/selfexe"
)

// doctorFull checks, for a hook command that runs the intentgate program
// at p, the intentgate-full program that intentgate runs for every command
// but hook and --version: that it is installed beside p (or beside the file
// p links to) and was built from the same source and settings as p. Hooks
// work without it; `intentgate mcp`, `serve`, `trace` and the rest do not,
// and a stale intentgate-full left by an upgrade of intentgate alone would
// run old code under the new name. It returns the problems found and a
// line for what holds.
func doctorFull(p string) (problems []string, fine string) {
	self, err := buildinfo.ReadFile(p)
	if err != nil || !strings.HasSuffix(self.Path, "/cmd/"+selfexe.Name) {
		// Not intentgate's lean program (a wrapper script, an older
		// single-program build): nothing to check.
		return nil, ""
	}
	name := selfexe.Exe(selfexe.FullName)
	dirs := []string{filepath.Dir(p)}
	if real, err := filepath.EvalSymlinks(p); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	var full string
	for _, d := range dirs {
		c := filepath.Join(d, name)
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			full = c
			break
		}
	}
	if full == "" {
		return []string{fmt.Sprintf("%s is missing beside %s: hook events are answered, but every other command (mcp, serve, trace, dispatch, run...) fails; "+
			"install both with `go install ./cmd/...` in intentgate's source tree", filepath.Join(dirs[len(dirs)-1], name), p)}, ""
	}
	other, err := buildinfo.ReadFile(full)
	if err != nil {
		return []string{fmt.Sprintf("%s is not a program intentgate can read the build of (%v): reinstall both with `go install ./cmd/...`", full, err)}, ""
	}
	if !strings.HasSuffix(other.Path, "/cmd/"+selfexe.FullName) {
		return []string{fmt.Sprintf("%s is %s, not intentgate-full: reinstall both with `go install ./cmd/...`", full, other.Path)}, ""
	}
	if diff := buildDiff(self, other); diff != "" {
		return []string{fmt.Sprintf("%s and %s come from different builds (%s): the commands but hook would run other code than the hooks; "+
			"reinstall both with `go install ./cmd/...` in one source tree", p, full, diff)}, ""
	}
	return nil, fmt.Sprintf("%s beside it, from the same build", full)
}

// buildDiff names what differs between two programs' builds: the module's
// version, the source revision and whether it had local changes, the
// linker flags (which set the version written into ledger records), the Go
// release and the target.
func buildDiff(a, b *debug.BuildInfo) string {
	type field struct{ name, a, b string }
	fs := []field{{"module version", a.Main.Version, b.Main.Version}, {"Go release", a.GoVersion, b.GoVersion}}
	for _, k := range []string{"vcs.revision", "vcs.modified", "-ldflags", "GOOS", "GOARCH"} {
		fs = append(fs, field{k, setting(a, k), setting(b, k)})
	}
	var out []string
	for _, f := range fs {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s %q against %q", f.name, f.a, f.b))
		}
	}
	return strings.Join(out, "; ")
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
