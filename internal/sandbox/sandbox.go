// Package sandbox runs the commands intentgate starts under kernel-enforced
// confinement. The governed agent runs as the same user as intentgate, so a
// command it asks for can write whatever that user can; a picture of the
// workspace taken afterwards, where the command could also write, cannot
// govern it. Here the kernel refuses the write instead:
//
//   - inside the workspace, writes only beneath the static roots of the active
//     intent's owned_scope;
//   - the governance paths (.orchestration/ at every depth, .intentignore,
//     .git/, the agents' hook settings, .mcp.json) are read-only whatever the
//     scope;
//   - outside it, only a private temporary directory and the build and package
//     caches named in .orchestration/config.yaml are writable;
//   - the command's whole process tree ends with it.
//
// On Linux the command runs under a small init (the intentgate binary itself,
// re-executed) in new user, mount and PID namespaces: the governance paths are
// bind-mounted read-only, Landlock allows writes only beneath the writable
// roots, and the process tree dies with the init. Where unprivileged user
// namespaces are unavailable, Landlock alone confines the command (writable
// roots that contain a governance path are narrowed to their other entries) and
// the init, a child subreaper, kills what the command leaves behind. On macOS
// the same rules are a Seatbelt profile for sandbox-exec. Elsewhere, and where
// the kernel offers neither mechanism, commands are refused unless the team
// opted out in config.yaml.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Policy is what one confined command may write. Every path is absolute.
type Policy struct {
	// Workspace is the governed directory.
	Workspace string
	// Writable are the files and directories the command may change:
	// the static roots of the intent's scope, the caches.
	Writable []string
	// ReadOnly are paths beneath Writable that stay read-only: the
	// governance paths.
	ReadOnly []string
	// Hidden are directories the command must not even read, replaced by an
	// empty directory: the per-workspace keys that authenticate the state
	// decisions rest on. (Linux with namespaces, and macOS.)
	Hidden []string
	// NoNetwork runs the command without network: in its own network
	// namespace with only a loopback interface (sandbox.network: deny).
	NoNetwork bool
	// AllowUnconfined runs the command without confinement where the
	// platform offers none, instead of refusing it (config.yaml opt-out).
	AllowUnconfined bool
}

// Hide adds the directories dirs that exist, resolved, to p.Hidden.
func (p *Policy) Hide(dirs ...string) {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // nothing there to hide
		}
		if fi, err := os.Stat(r); err == nil && fi.IsDir() && !slices.Contains(p.Hidden, r) {
			p.Hidden = append(p.Hidden, r)
		}
	}
}

// ErrUnavailable is returned, wrapped, when no confinement is possible here
// and the team did not opt out.
var ErrUnavailable = errors.New("commands cannot be confined on this system")

// GovernanceNames are the entries at the top of a workspace that no command
// may write, whatever its scope. .orchestration and .git are also protected
// at every depth.
var GovernanceNames = []string{
	".orchestration", ".intentignore", ".git",
	".claude", ".codex", ".gemini", ".cursor", ".clinerules", ".cline", ".mcp.json",
}

// nestedNames are protected wherever they appear.
var nestedNames = map[string]bool{".orchestration": true, ".git": true}

// StaticRoot is the longest glob-free prefix of a scope pattern, as a
// workspace-relative slash path ("" for the workspace itself): the directory
// a command may write beneath for that pattern. A pattern without a glob is
// its own root.
func StaticRoot(pattern string) string {
	p := strings.TrimPrefix(filepath.ToSlash(pattern), "./")
	var keep []string
	parts := strings.Split(p, "/")
	for _, part := range parts {
		if strings.ContainsAny(part, "*?[{\\") {
			break
		}
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			return "" // never above the workspace; Roots drops it
		}
		keep = append(keep, part)
	}
	return strings.Join(keep, "/")
}

// ForScope builds the policy for a command in the workspace ws (absolute)
// under an intent whose owned_scope is scope: its static roots become
// writable (a missing root directory is created, so that a command can fill
// it), the governance paths beneath them read-only. With no scope nothing in
// the workspace is writable.
func ForScope(ws string, scope []string, cfg Config) (*Policy, error) {
	ws, err := filepath.Abs(ws)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s: %w", ws, err)
	}
	p := &Policy{Workspace: real, AllowUnconfined: cfg.AllowUnconfined, NoNetwork: cfg.Network == NetworkDeny}
	seen := map[string]bool{}
	for _, pat := range scope {
		if strings.HasPrefix(strings.TrimPrefix(filepath.ToSlash(pat), "./"), "../") {
			continue
		}
		root, err := inside(real, StaticRoot(pat))
		if err != nil || root == "" || seen[root] || (root != real && isGovernance(real, root)) {
			continue
		}
		seen[root] = true
		p.Writable = append(p.Writable, root)
	}
	p.Writable = outermost(p.Writable)
	for _, root := range p.Writable {
		ro, err := governanceUnder(real, root)
		if err != nil {
			return nil, err
		}
		p.ReadOnly = append(p.ReadOnly, ro...)
	}
	// A governance path that is a link: a mount over the link would land
	// on its target, and the link itself sits in a directory the command
	// may write; so its target is made read-only too, wherever it is (a
	// changed or replaced link is restored by the judgement after the
	// command). A link to nothing yet would let the command create the
	// governance files through the target's own path: refused.
	links := append([]string{}, p.ReadOnly...)
	for _, g := range GovernanceNames {
		links = append(links, filepath.Join(real, g))
	}
	for _, ro := range links {
		fi, err := os.Lstat(ro)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(ro)
		if err != nil {
			rel, _ := filepath.Rel(real, ro)
			return nil, fmt.Errorf("the governance path %s is a link to nothing (%v): a command could create what it points to; remove the link, or make its target exist", filepath.ToSlash(rel), err)
		}
		if !slices.Contains(p.ReadOnly, target) {
			p.ReadOnly = append(p.ReadOnly, target)
		}
	}
	for _, c := range cfg.writableOutside() {
		if c == "" || within(c, real) || within(real, c) {
			continue // a cache setting never widens the workspace
		}
		p.Writable = append(p.Writable, c)
	}
	sort.Strings(p.ReadOnly)
	return p, nil
}

// inside resolves rel beneath the workspace real, creating a missing
// directory root when its nearest existing ancestor is inside; it returns ""
// for a root that resolves elsewhere (a link out of the workspace).
func inside(real, rel string) (string, error) {
	abs := filepath.Join(real, filepath.FromSlash(rel))
	existing := abs
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", nil
		}
		existing = parent
	}
	r, err := filepath.EvalSymlinks(existing)
	if err != nil || !within(r, real) {
		return "", err
	}
	rest, _ := filepath.Rel(existing, abs)
	full := filepath.Join(r, rest)
	if rest != "." {
		// A pattern's root that does not exist yet: a directory the
		// intent owns, which the command may create files in. A root
		// that names a governance path is never writable.
		if isGovernance(real, full) {
			return "", nil
		}
		if looksLikeFile(rest) {
			// A file the intent names that does not exist yet: its
			// directory would give far more than the file, so a command
			// cannot create it (write_to_file can).
			return "", nil
		}
		if err := os.MkdirAll(full, 0o755); err != nil {
			return "", nil
		}
	}
	return full, nil
}

// looksLikeFile guesses that a missing literal root with an extension names
// a file.
func looksLikeFile(rel string) bool {
	base := filepath.Base(rel)
	return strings.Contains(strings.TrimPrefix(base, "."), ".")
}

func isGovernance(ws, p string) bool {
	rel, err := filepath.Rel(ws, p)
	if err != nil {
		return false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, g := range GovernanceNames {
		if parts[0] == g {
			return true
		}
	}
	for _, part := range parts {
		if nestedNames[part] {
			return true
		}
	}
	return false
}

// within reports whether p is dir or beneath it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	return strings.HasPrefix(p, strings.TrimRight(dir, string(filepath.Separator))+string(filepath.Separator))
}

// outermost drops roots contained in another root.
func outermost(roots []string) []string {
	sort.Strings(roots)
	var out []string
	for _, r := range roots {
		if len(out) > 0 && within(r, out[len(out)-1]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// governanceUnder lists the governance paths at or beneath root: the top
// entries of the workspace, and every .orchestration and .git below.
func governanceUnder(ws, root string) ([]string, error) {
	var out []string
	for _, g := range GovernanceNames {
		p := filepath.Join(ws, g)
		if _, err := os.Lstat(p); err == nil && (within(p, root) || within(root, p)) {
			out = append(out, p)
		}
	}
	if isGovernance(ws, root) {
		return out, nil
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // what cannot be listed cannot be checked, nor is it a workspace
		}
		if path == root {
			return nil
		}
		if nestedNames[d.Name()] {
			if filepath.Dir(path) != ws {
				out = append(out, path)
			}
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listing %s for governance paths: %w", root, err)
	}
	return out, nil
}
