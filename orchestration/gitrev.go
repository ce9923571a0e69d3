package orchestration

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/internal/fsx"
)

// Git gives the revision the workspace is at, for the ledger's vcs field.
//
// It reads git's files itself (HEAD, loose refs, packed-refs, a linked
// worktree's gitdir and commondir files) rather than linking a git library:
// every hook process links this package, and a revision is all it needs.
type Git struct {
	// gitDir holds HEAD; commonDir the shared refs (the same directory
	// except in a linked worktree).
	gitDir, commonDir string

	// For LazyGit: the workspace, found on the first Head.
	dir  string
	once sync.Once
	err  error

	// The files Head reads are kept while a stat proves them unchanged
	// (fsx.File): a record's revision costs a stat or two, not reads.
	mu     sync.Mutex
	files  map[string]*fsx.File
	packed map[string]packedAnswer // by packed-refs path and ref name
}

// packedAnswer is a ref looked up in the bytes of a packed-refs file.
type packedAnswer struct {
	data []byte
	sha  string
	ok   bool
}

// gitFilesMax bounds the files a Git keeps (a chain of symbolic refs names
// a few; a workspace that switches branches often names more).
const gitFilesMax = 64

// read returns the bytes of the file at p, kept between calls, and whether
// they were read now (fsx.File.Read).
func (g *Git) read(p string) ([]byte, bool, error) {
	g.mu.Lock()
	f, ok := g.files[p]
	if !ok {
		if g.files == nil || len(g.files) >= gitFilesMax {
			g.files, g.packed = map[string]*fsx.File{}, nil
		}
		f = fsx.NewFile(p, 0)
		g.files[p] = f
	}
	g.mu.Unlock()
	return f.Read()
}

// LazyGit is OpenGit put off until the first Head: a process that records
// nothing (a hook answering a read, say) never looks for the repository.
func LazyGit(workspace string) *Git {
	return &Git{dir: workspace}
}

// OpenGit finds the git repository containing workspace, looking upwards for
// a .git directory or file and following linked worktrees to their common
// directory. It returns (nil, nil) when workspace is not inside a
// repository. Like git's own discovery, a .git without HEAD is not a
// repository.
func OpenGit(workspace string) (*Git, error) {
	dir, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("open git repository at %s: %w", workspace, err)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	for {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil:
			g, err := openDotGit(dotgit, fi)
			if err != nil {
				return nil, fmt.Errorf("open git repository at %s: %w", workspace, err)
			}
			return g, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("open git repository at %s: %w", workspace, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

// openDotGit opens the repository of one .git entry: a directory, or a file
// "gitdir: PATH" (a linked worktree, a submodule) naming the directory.
func openDotGit(dotgit string, fi fs.FileInfo) (*Git, error) {
	gitDir := dotgit
	if !fi.IsDir() {
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return nil, err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		line = strings.TrimSuffix(line, "\r")
		p, ok := strings.CutPrefix(line, "gitdir: ")
		if !ok || p == "" {
			return nil, fmt.Errorf("%s: not a gitdir file (want \"gitdir: PATH\")", dotgit)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(dotgit), p)
		}
		gitDir = filepath.Clean(p)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s has no HEAD: not a git repository", gitDir)
		}
		return nil, err
	}
	g := &Git{gitDir: gitDir, commonDir: gitDir}
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	switch {
	case err == nil:
		p := strings.TrimRight(string(b), "\r\n")
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitDir, p)
		}
		g.commonDir = filepath.Clean(p)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return g, nil
}

// Head returns the commit HEAD points to, as git's files hold it now (each
// checked with a stat, read again when it changed). It
// returns "" without error for a repository with no commits yet, and for a
// nil *Git (no repository).
func (g *Git) Head() (string, error) {
	if g == nil {
		return "", nil
	}
	if g.dir != "" {
		g.once.Do(func() {
			var opened *Git
			if opened, g.err = OpenGit(g.dir); opened != nil {
				g.gitDir, g.commonDir = opened.gitDir, opened.commonDir
			}
		})
		if g.err != nil {
			return "", g.err
		}
		if g.gitDir == "" {
			return "", nil // not in a repository
		}
	}
	h, err := g.resolve("HEAD")
	if err != nil {
		return "", fmt.Errorf("read git HEAD: %w", err)
	}
	return h, nil
}

// maxRefDepth bounds a chain of symbolic refs, as git does.
const maxRefDepth = 5

// resolve follows the ref name to an object name; "" when it (or a ref it
// points to) does not exist, as on an unborn branch.
func (g *Git) resolve(name string) (string, error) {
	for range maxRefDepth + 1 {
		v, ok, err := g.readRef(name)
		if err != nil || !ok {
			return "", err
		}
		target, sym := strings.CutPrefix(v, "ref: ")
		if !sym {
			if !isObjectName(v) {
				return "", fmt.Errorf("ref %s holds %q, not an object name", name, v)
			}
			return strings.ToLower(v), nil
		}
		name = strings.TrimSpace(target)
		if !validRefName(name) {
			return "", fmt.Errorf("symbolic ref to %q, which is not a ref name", name)
		}
	}
	return "", fmt.Errorf("ref %s: more than %d symbolic refs in a chain", name, maxRefDepth)
}

// readRef reads one ref: the loose file first, then packed-refs. HEAD and
// the per-worktree refs live in the worktree's own directory, the others
// in the common one.
func (g *Git) readRef(name string) (string, bool, error) {
	dir := g.commonDir
	if perWorktree(name) {
		dir = g.gitDir
	}
	b, _, err := g.read(filepath.Join(dir, filepath.FromSlash(name)))
	switch {
	case err == nil:
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimSpace(line), true, nil
	case errors.Is(err, fs.ErrNotExist), isDirErr(dir, name):
		// A directory of that name holds other refs, not this one.
	default:
		return "", false, err
	}
	if !strings.HasPrefix(name, "refs/") {
		return "", false, nil
	}
	return g.packedRef(dir, name)
}

// packedRef looks name up in dir/packed-refs. The answer is kept with the
// file's bytes: a large packed-refs is scanned again only when it changed.
func (g *Git) packedRef(dir, name string) (string, bool, error) {
	p := filepath.Join(dir, "packed-refs")
	data, _, err := g.read(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if len(data) == 0 {
		return "", false, nil
	}
	key := p + "\x00" + name
	g.mu.Lock()
	a, known := g.packed[key]
	g.mu.Unlock()
	// The answer holds for the very bytes it was found in: a File hands
	// out the same slice for as long as the file is unchanged.
	if known && &a.data[0] == &data[0] && len(a.data) == len(data) {
		return a.sha, a.ok, nil
	}
	sha, ok, err := scanPackedRefs(data, name)
	if err != nil {
		return "", false, err
	}
	g.mu.Lock()
	if g.packed == nil {
		g.packed = map[string]packedAnswer{}
	}
	g.packed[key] = packedAnswer{data, sha, ok}
	g.mu.Unlock()
	return sha, ok, nil
}

// scanPackedRefs looks name up in the bytes of a packed-refs file.
func scanPackedRefs(data []byte, name string) (string, bool, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	want := []byte(name)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		sha, ref, ok := bytes.Cut(line, []byte{' '})
		if ok && bytes.Equal(ref, want) {
			return string(sha), true, nil
		}
	}
	return "", false, sc.Err()
}

// perWorktree reports the refs each worktree has of its own.
func perWorktree(name string) bool {
	if !strings.Contains(name, "/") {
		return true // HEAD, ORIG_HEAD and the other pseudo-refs
	}
	for _, p := range []string{"refs/worktree/", "refs/bisect/", "refs/rewritten/"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isDirErr reports whether dir/name is a directory (reading it fails with
// an error other than "not found").
func isDirErr(dir, name string) bool {
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
	return err == nil && fi.IsDir()
}

// validRefName accepts the names a symbolic ref may point to: HEAD-like
// names and refs/..., with no component that would leave the git directory.
func validRefName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) {
		return false
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return name == "HEAD" || strings.HasPrefix(name, "refs/")
}

// isObjectName reports a SHA-1 or SHA-256 object name in hexadecimal.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
