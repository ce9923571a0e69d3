package engine

import (
	"io/fs"
	"os"
	"strings"
	"sync"
)

// dirRef is an open directory of the workspace, verified component by
// component when it was opened (openDir), and kept open for the next calls
// that need it: the temp and journal directories of every write, and the
// directories of the files written most recently. Before each use, every
// component is checked again to still be the same plain directory (one
// fstatat per component, against about five system calls per component to
// open it anew): a directory swapped for a symlink or moved away since is
// seen, and the directory is opened again through verified handles, which
// refuses the swap.
type dirRef struct {
	rel  string
	root *os.Root
	f    *os.File // the directory itself, for renames and fsync
	// prefixes are the canonical paths of rel's components from the top
	// ("src", "src/w"); ids what each was when it was opened.
	prefixes []string
	ids      []fs.FileInfo
	users    int
	dropped  bool // no longer cached: closed when its last user is done
}

// maxCachedDirs bounds the directories of written files kept open per
// workspace (the temp and journal directories come on top).
const maxCachedDirs = 32

type dirCache struct {
	mu   sync.Mutex
	dirs map[string]*dirRef
	tick map[string]uint64 // last use, to drop the least recent
	now  uint64
}

func (d *dirRef) close() {
	d.f.Close()
	d.root.Close()
}

// acquireDir returns the directory rel ("" for the root) opened through
// verified handles, from the cache when it is still what was opened. The
// caller releases it with releaseDir.
func (w *Workspace) acquireDir(rel string, create bool) (*dirRef, error) {
	c := &w.cache
	c.mu.Lock()
	if d := c.dirs[rel]; d != nil {
		if w.sameDirs(d.prefixes, d.ids) {
			d.users++
			c.now++
			c.tick[rel] = c.now
			c.mu.Unlock()
			return d, nil
		}
		c.dropLocked(d)
	}
	c.mu.Unlock()

	root, ids, err := w.openDirIDs(rel, create)
	if err != nil {
		return nil, err
	}
	f, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, err
	}
	if got, err := f.Stat(); err != nil || len(ids) > 0 && !os.SameFile(got, ids[len(ids)-1]) {
		f.Close()
		root.Close()
		return nil, escape(rel, "the directory changed while it was being opened")
	}
	d := &dirRef{rel: rel, root: root, f: f, ids: ids, users: 1}
	if !keepDirsOpen {
		d.dropped = true // closed by releaseDir
		return d, nil
	}
	if rel != "" {
		parts := strings.Split(rel, "/")
		for i := range parts {
			d.prefixes = append(d.prefixes, strings.Join(parts[:i+1], "/"))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirs == nil {
		c.dirs = map[string]*dirRef{}
		c.tick = map[string]uint64{}
	}
	if old := c.dirs[rel]; old != nil {
		c.dropLocked(old)
	}
	if len(c.dirs) >= maxCachedDirs+2 {
		c.evictLocked()
	}
	c.dirs[rel] = d
	c.now++
	c.tick[rel] = c.now
	return d, nil
}

// cachedDir returns rel's directory when it is in the cache and still what
// was opened (as acquireDir), and nil otherwise: it never opens one.
func (w *Workspace) cachedDir(rel string) *dirRef {
	c := &w.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.dirs[rel]
	if d == nil || !w.sameDirs(d.prefixes, d.ids) {
		return nil
	}
	d.users++
	return d
}

// releaseDir ends a use of d (from acquireDir).
func (w *Workspace) releaseDir(d *dirRef) {
	c := &w.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	d.users--
	if d.users == 0 && d.dropped {
		d.close()
	}
}

func (c *dirCache) dropLocked(d *dirRef) {
	if c.dirs[d.rel] == d {
		delete(c.dirs, d.rel)
		delete(c.tick, d.rel)
	}
	d.dropped = true
	if d.users == 0 {
		d.close()
	}
}

// evictLocked drops the least recently used directory other than the temp,
// journal and locks directories.
func (c *dirCache) evictLocked() {
	var oldest *dirRef
	for rel, d := range c.dirs {
		if rel == TempDir || rel == JournalDir || rel == LocksDir {
			continue
		}
		if oldest == nil || c.tick[rel] < c.tick[oldest.rel] {
			oldest = d
		}
	}
	if oldest != nil {
		c.dropLocked(oldest)
	}
}

// closeAll closes every cached directory (Workspace.Close).
func (c *dirCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.dirs {
		c.dropLocked(d)
	}
}

// openDirIDs is openDir also returning what each component was when it
// was opened.
func (w *Workspace) openDirIDs(dir string, create bool) (*os.Root, []fs.FileInfo, error) {
	var ids []fs.FileInfo
	root, err := w.walkDir(dir, create, func(fi fs.FileInfo) { ids = append(ids, fi) })
	if err != nil {
		return nil, nil, err
	}
	return root, ids, nil
}
