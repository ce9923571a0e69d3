package picture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/intentgate/intentgate/internal/gitignore"
)

// What a snapshot keeps in memory so a changed file's old content is known:
// files up to keepFileBytes, keepTotalBytes in all. A larger file that
// changes is reported with its old content unknown.
const (
	keepFileBytes  = 1 << 20
	keepTotalBytes = 64 << 20
)

type entry struct {
	size  int64
	mtime int64
	// ctime is the inode change time where the platform has one: unlike
	// mtime, no program can set it back, so an in-place rewrite of the same
	// size followed by "touch -r" still shows.
	ctime   int64
	mode    fs.FileMode
	ino     uint64
	link    string // symlink target
	content []byte // nil when not kept
	kept    bool
}

// Snapshot is a cheap picture of the workspace: stat data for every file,
// content for the small ones. Directories git ignores are skipped (they are
// build output and dependencies, and walking them makes large repositories
// slow); intentgate's own bookkeeping under .orchestration is skipped because
// other sessions write it concurrently; git's internals are skipped except
// its hooks and config, which a command must not change unnoticed.
type Snapshot struct {
	root  string
	files map[string]*entry
	// unseen holds the paths the walk could not inspect (a name too long
	// for the kernel, a directory it may not read), with the reason. What
	// lies there may have changed without the snapshot seeing it.
	unseen map[string]string
}

// maxUnseenPath bounds how much of an uninspectable path is reported.
const maxUnseenPath = 1024

func (s *Snapshot) addUnseen(rel string, err error) {
	if len(rel) > maxUnseenPath {
		cut := strings.LastIndexByte(rel[:maxUnseenPath], '/')
		if cut <= 0 {
			cut = maxUnseenPath
		}
		rel = rel[:cut]
	}
	if _, dup := s.unseen[rel]; !dup {
		s.unseen[rel] = unwrapPath(err).Error()
	}
}

// Unseen returns the workspace paths the snapshot could not inspect, sorted,
// with why.
func (s *Snapshot) Unseen() []Unseen {
	out := make([]Unseen, 0, len(s.unseen))
	for rel, why := range s.unseen {
		out = append(out, Unseen{Path: rel, Why: why})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Unseen is a path a snapshot could not inspect.
type Unseen struct {
	Path string
	Why  string
}

// skipDir reports directories never walked, by workspace-relative path.
func skipDir(rel string) bool {
	switch rel {
	case ".orchestration/sessions", ".orchestration/locks", ".orchestration/index", ".orchestration/tmp", ".orchestration/journal":
		return true
	}
	return false
}

// skipFile reports files intentgate itself rewrites during other sessions'
// calls.
func skipFile(rel string) bool {
	if !strings.HasPrefix(rel, ".orchestration/") {
		return false
	}
	base := rel[len(".orchestration/"):]
	return strings.HasPrefix(base, "agent_trace.jsonl") || strings.HasPrefix(base, "intent_map.") ||
		strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".lock")
}

// isDaemonSocket reports the socket of intentgate serve, which appears and
// disappears as the daemon starts and stops, whatever a command does.
func isDaemonSocket(rel string, t fs.FileMode) bool {
	return rel == ".orchestration/intentgate.sock" && t&fs.ModeSocket != 0
}

// TakeSnapshot walks the workspace rooted at dir.
func TakeSnapshot(dir string) (*Snapshot, error) {
	s := &Snapshot{root: dir, files: map[string]*entry{}, unseen: map[string]string{}}
	var budget int64 = keepTotalBytes
	var matcher gitignore.Matcher
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			// A file that vanished mid-walk is simply not in the picture.
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			// Anything else (a name too long for the kernel, a directory
			// it may not read) is a part of the workspace that cannot be
			// judged: remember it rather than fail the whole picture, so
			// that a command cannot hide its other changes by making the
			// walk fail, nor make every later command fail.
			rel, _ := filepath.Rel(dir, p)
			s.addUnseen(filepath.ToSlash(rel), err)
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				matcher = append(matcher, readIgnore(p, nil)...)
				return nil
			}
			parts := strings.Split(rel, "/")
			if rel == ".git" {
				s.addGitGuards(p)
				return filepath.SkipDir
			}
			if d.Name() == ".git" || skipDir(rel) || matcher.Match(parts, true) {
				return filepath.SkipDir
			}
			matcher = append(matcher, readIgnore(p, parts)...)
			return nil
		}
		// Bookkeeping files are skipped only while they are plain files: one
		// a command turned into a symlink (or anything else) would have
		// intentgate itself write wherever it points.
		if skipFile(rel) && d.Type().IsRegular() || isDaemonSocket(rel, d.Type()) {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			s.addUnseen(rel, err)
			return nil
		}
		e := statEntry(fi)
		if fi.Mode()&fs.ModeSymlink != 0 {
			e.link, _ = os.Readlink(p)
		} else if fi.Mode().IsRegular() && fi.Size() <= keepFileBytes && fi.Size() <= budget {
			if b, err := readRegular(p); err == nil {
				e.content, e.kept = b, true
				budget -= int64(len(b))
			}
		}
		s.files[rel] = e
		return nil
	})
	return s, err
}

func (s *Snapshot) addGitGuards(gitDir string) {
	for _, rel := range []string{".git/config"} {
		s.addFile(rel)
	}
	hooks := filepath.Join(gitDir, "hooks")
	ents, _ := os.ReadDir(hooks)
	for _, e := range ents {
		s.addFile(".git/hooks/" + e.Name())
	}
}

func (s *Snapshot) addFile(rel string) {
	p := filepath.Join(s.root, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil || fi.IsDir() {
		return
	}
	e := statEntry(fi)
	if fi.Mode().IsRegular() && fi.Size() <= keepFileBytes {
		if b, err := readRegular(p); err == nil {
			e.content, e.kept = b, true
		}
	}
	s.files[rel] = e
}

func statEntry(fi fs.FileInfo) *entry {
	return &entry{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: ctime(fi), mode: fi.Mode(), ino: inode(fi)}
}

// readRegular reads the regular file at p. It does not follow a symlink nor
// block on a FIFO swapped in since the walk looked at p (a process the
// command left behind can still be changing the tree).
func readRegular(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is no longer a regular file", p)
	}
	return io.ReadAll(f)
}

func readIgnore(dir string, parts []string) []gitignore.Pattern {
	b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.Parse(line, parts))
	}
	return ps
}

// Change is one difference between two snapshots.
type Change struct {
	Path    string
	Before  []byte
	After   []byte
	Known   bool // Before is the real old content
	Existed bool
	Deleted bool
	Link    string // the new symlink target, if the path is now a symlink
	// Unreadable says why the new content could not be read, if it could not.
	Unreadable string
}

// Diff lists what changed from s to after, sorted by path. Files whose stat
// data changed but whose content did not are not changes.
func (s *Snapshot) Diff(after *Snapshot) []Change {
	var out []Change
	for rel, a := range after.files {
		b, existed := s.files[rel]
		if existed && b.size == a.size && b.mtime == a.mtime && b.ctime == a.ctime && b.mode == a.mode && b.ino == a.ino && b.link == a.link {
			continue
		}
		ch := Change{Path: rel, Existed: existed, Link: a.link}
		if existed {
			ch.Before, ch.Known = b.content, b.kept
			if b.link != "" {
				ch.Before, ch.Known = []byte(b.link), true
			}
		} else {
			ch.Known = true
		}
		if a.link != "" {
			ch.After = []byte(a.link)
		} else if a.mode.IsRegular() {
			cur, err := readRegular(filepath.Join(after.root, filepath.FromSlash(rel)))
			if errors.Is(err, fs.ErrNotExist) {
				// Gone since the walk: report the deletion.
				if !existed {
					continue
				}
				ch.Deleted = true
			} else if err != nil {
				// Changed, but what it holds now cannot be read: still a
				// change, never silently dropped.
				ch.Unreadable = err.Error()
			} else {
				ch.After = cur
			}
		}
		if existed && ch.Known && !ch.Deleted && ch.Unreadable == "" && b.link == a.link && b.mode == a.mode && bytes.Equal(ch.Before, ch.After) {
			continue
		}
		out = append(out, ch)
	}
	for rel, b := range s.files {
		if _, ok := after.files[rel]; ok {
			continue
		}
		ch := Change{Path: rel, Existed: true, Deleted: true, Before: b.content, Known: b.kept}
		if b.link != "" {
			ch.Before, ch.Known = []byte(b.link), true
		}
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
