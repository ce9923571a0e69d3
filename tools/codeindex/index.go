package codeindex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/philippgille/chromem-go"
)

// Result is one chunk found, in the shape of Roo Code's
// CodebaseSearchResult entries.
type Result struct {
	FilePath  string  `json:"filePath"`
	Score     float64 `json:"score"`
	StartLine int     `json:"startLine"`
	EndLine   int     `json:"endLine"`
	CodeChunk string  `json:"codeChunk"`
}

// Options configure an index.
type Options struct {
	// Embedder ranks by meaning; without one the ranking is BM25.
	Embedder *Embedder
	// StoreDir holds the vector store (.orchestration/index/); in memory
	// when empty.
	StoreDir string
	// MaxFileBytes: larger files are not indexed; 1 MiB when 0.
	MaxFileBytes int64
	// MaxFiles bounds how many files are indexed; 200,000 when 0.
	MaxFiles int
}

// Index is a searchable picture of a workspace's code.
type Index struct {
	dir  string
	root *os.Root
	opts Options

	mu     sync.RWMutex
	files  map[string][]int // path -> doc numbers
	chunks []Chunk          // by doc number
	ids    []string         // vector ids by doc number, with an embedder
	bm     *bm25

	// igMu guards ignores: per directory (workspace-relative, "." for the
	// root), the ignore patterns in force inside it.
	igMu    sync.Mutex
	ignores map[string][]gitignore.Pattern

	db   *chromem.DB
	coll *chromem.Collection

	watcher *fsnotify.Watcher
	done    chan struct{}
}

// skipDirs are never indexed: dependencies, build output, VCS and
// governance data.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "dist": true, "build": true, "out": true, "target": true,
	"__pycache__": true, "venv": true, "env": true, "tmp": true, "temp": true, "Pods": true, "bundle": true,
}

// Open prepares an index of dir; Build fills it.
func Open(dir string, opts Options) (*Index, error) {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = 1 << 20
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = 200_000
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	x := &Index{dir: dir, root: root, opts: opts, files: map[string][]int{}, bm: newBM25()}
	x.ignores = map[string][]gitignore.Pattern{}
	if opts.Embedder != nil {
		if opts.StoreDir != "" {
			if err := os.MkdirAll(opts.StoreDir, 0o755); err != nil {
				root.Close()
				return nil, err
			}
			x.db, err = chromem.NewPersistentDB(opts.StoreDir, false)
		} else {
			x.db = chromem.NewDB()
		}
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("vector store %s: %w (delete the directory to rebuild it)", opts.StoreDir, err)
		}
		noEmbed := func(context.Context, string) ([]float32, error) {
			return nil, errors.New("codeindex embeds texts itself")
		}
		x.coll, err = x.db.GetOrCreateCollection("code", map[string]string{"model": opts.Embedder.Model}, noEmbed)
		if err != nil {
			root.Close()
			return nil, err
		}
	}
	return x, nil
}

// parseIgnore reads the patterns of one ignore file, which apply below the
// directory domain.
func parseIgnore(b []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	for _, l := range strings.Split(strings.TrimPrefix(string(b), "\ufeff"), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(l, domain))
	}
	return ps
}

// patternsIn returns the ignore patterns in force inside directory dir, as
// list_files and search_files see them: git's info/exclude, then every
// .gitignore from the root down to dir, the deeper ones last (they win).
func (x *Index) patternsIn(dir string) []gitignore.Pattern {
	x.igMu.Lock()
	ps, ok := x.ignores[dir]
	x.igMu.Unlock()
	if ok {
		return ps
	}
	if dir == "." || dir == "" {
		dir = "."
		if b, err := x.root.ReadFile(filepath.Join(".git", "info", "exclude")); err == nil {
			ps = parseIgnore(b, nil)
		}
		if b, err := x.root.ReadFile(".gitignore"); err == nil {
			ps = append(ps, parseIgnore(b, nil)...)
		}
	} else {
		parent := "."
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			parent = dir[:i]
		}
		ps = x.patternsIn(parent)
		if b, err := x.root.ReadFile(filepath.Join(filepath.FromSlash(dir), ".gitignore")); err == nil {
			ps = append(slices.Clip(ps), parseIgnore(b, strings.Split(dir, "/"))...)
		}
	}
	x.igMu.Lock()
	x.ignores[dir] = ps
	x.igMu.Unlock()
	return ps
}

// forgetIgnores drops the cached patterns, after an ignore file changed.
func (x *Index) forgetIgnores() {
	x.igMu.Lock()
	clear(x.ignores)
	x.igMu.Unlock()
}

// ignored reports whether the ignore files exclude the workspace path rel,
// judged by the patterns of its own directory (the walk never enters an
// excluded directory).
func (x *Index) ignored(rel string, isDir bool) bool {
	dir := "."
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir = rel[:i]
	}
	ps := x.patternsIn(dir)
	parts := strings.Split(rel, "/")
	for i := len(ps) - 1; i >= 0; i-- {
		if r := ps[i].Match(parts, isDir); r != gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	return false
}

func (x *Index) skipDir(rel, name string) bool {
	return rel != "." && (strings.HasPrefix(name, ".") || skipDirs[name] || x.ignored(rel, true))
}

// Files returns the number of files indexed.
func (x *Index) Files() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.files)
}

// Build indexes every file of the workspace.
func (x *Index) Build(ctx context.Context) error {
	var paths []string
	err := filepath.WalkDir(x.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory is left out, not fatal
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel, _ := filepath.Rel(x.dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if x.skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && len(paths) < x.opts.MaxFiles && !x.ignored(rel, false) {
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.mu.Lock()
	for _, p := range paths {
		x.indexLocked(p)
	}
	x.mu.Unlock()
	return x.syncVectors(ctx)
}

// indexLocked (re)reads one file into the lexical index; the vectors follow
// in syncVectors.
func (x *Index) indexLocked(rel string) {
	for _, d := range x.files[rel] {
		x.bm.remove(d)
	}
	delete(x.files, rel)
	fi, err := x.root.Lstat(filepath.FromSlash(rel))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > x.opts.MaxFileBytes {
		return
	}
	b, err := x.root.ReadFile(filepath.FromSlash(rel))
	if err != nil || bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return
	}
	docs := []int{}
	for _, c := range Split(rel, b) {
		d := x.bm.add(c.Text + " " + rel)
		x.chunks = append(x.chunks, c)
		x.ids = append(x.ids, "")
		docs = append(docs, d)
	}
	x.files[rel] = docs
}

func chunkID(c Chunk) string {
	h := sha256.Sum256([]byte(c.Path + "\x00" + strconv.Itoa(c.StartLine) + "\x00" + c.Text))
	return hex.EncodeToString(h[:16])
}

// syncVectors embeds the chunks the vector store lacks and deletes the
// vectors of chunks that are gone. Unchanged chunks keep their vectors
// across runs: the id is a hash of path, position and text.
func (x *Index) syncVectors(ctx context.Context) error {
	if x.coll == nil {
		return nil
	}
	x.mu.Lock()
	want := map[string]bool{}
	var missing []Chunk
	for _, docs := range x.files {
		for _, d := range docs {
			c := x.chunks[d]
			id := chunkID(c)
			x.ids[d] = id
			want[id] = true
			if _, err := x.coll.GetByID(ctx, id); err != nil {
				missing = append(missing, c)
			}
		}
	}
	x.mu.Unlock()
	manifest := filepath.Join(x.opts.StoreDir, "manifest.json")
	var stored []string
	if x.opts.StoreDir != "" {
		if b, err := os.ReadFile(manifest); err == nil {
			_ = json.Unmarshal(b, &stored)
		}
	}
	var stale []string
	for _, id := range stored {
		if !want[id] {
			stale = append(stale, id)
		}
	}
	if len(stale) > 0 {
		if err := x.coll.Delete(ctx, nil, nil, stale...); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		texts := make([]string, len(missing))
		for i, c := range missing {
			texts[i] = c.Path + "\n" + c.Text
		}
		vecs, err := x.opts.Embedder.Embed(ctx, texts)
		if err != nil {
			return err
		}
		docs := make([]chromem.Document, len(missing))
		for i, c := range missing {
			docs[i] = chromem.Document{ID: chunkID(c), Embedding: vecs[i], Content: c.Text, Metadata: map[string]string{
				"path": c.Path, "start": strconv.Itoa(c.StartLine), "end": strconv.Itoa(c.EndLine)}}
		}
		if err := x.coll.AddDocuments(ctx, docs, 4); err != nil {
			return err
		}
	}
	if x.opts.StoreDir != "" {
		ids := make([]string, 0, len(want))
		for id := range want {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		b, _ := json.Marshal(ids)
		tmp := manifest + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, manifest)
	}
	return nil
}

// Update re-reads the given files (gone ones are dropped).
func (x *Index) Update(ctx context.Context, rels ...string) error {
	x.mu.Lock()
	for _, rel := range rels {
		if x.pathSkipped(rel) {
			continue
		}
		x.indexLocked(rel)
	}
	x.mu.Unlock()
	return x.syncVectors(ctx)
}

func (x *Index) pathSkipped(rel string) bool {
	parts := strings.Split(rel, "/")
	for i := range parts[:len(parts)-1] {
		if x.skipDir(strings.Join(parts[:i+1], "/"), parts[i]) {
			return true
		}
	}
	return x.ignored(rel, false)
}

// Search returns up to n chunks for query, within the directory prefix when
// one is given (workspace-relative, "" for all).
func (x *Index) Search(ctx context.Context, query, prefix string, n int) ([]Result, error) {
	prefix = strings.Trim(prefix, "/")
	within := func(p string) bool {
		return prefix == "" || prefix == "." || p == prefix || strings.HasPrefix(p, prefix+"/")
	}
	if x.coll != nil {
		return x.searchVectors(ctx, query, n, within)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []Result
	for _, s := range x.bm.search(query, n, func(d int) bool { return within(x.chunks[d].Path) }) {
		c := x.chunks[s.doc]
		out = append(out, Result{FilePath: c.Path, Score: s.score, StartLine: c.StartLine, EndLine: c.EndLine, CodeChunk: strings.TrimSpace(c.Text)})
	}
	return out, nil
}

func (x *Index) searchVectors(ctx context.Context, query string, n int, within func(string) bool) ([]Result, error) {
	count := x.coll.Count()
	if count == 0 {
		return nil, nil
	}
	vs, err := x.opts.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	k := min(count, max(n*4, n+20))
	rs, err := x.coll.QueryEmbedding(ctx, vs[0], k, nil, nil)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, r := range rs {
		p := r.Metadata["path"]
		if !within(p) {
			continue
		}
		start, _ := strconv.Atoi(r.Metadata["start"])
		end, _ := strconv.Atoi(r.Metadata["end"])
		out = append(out, Result{FilePath: p, Score: float64(r.Similarity), StartLine: start, EndLine: end, CodeChunk: strings.TrimSpace(r.Content)})
		if len(out) == n {
			break
		}
	}
	return out, nil
}

// Watch keeps the index fresh with fsnotify until ctx ends or Close:
// directories are watched (editors save by rename), and the files named in
// a burst of events are re-read together.
func (x *Index) Watch(ctx context.Context, onError func(error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.watcher, x.done = w, make(chan struct{})
	x.mu.Unlock()
	x.watchTree(w, ".")
	go func() {
		defer close(x.done)
		pending := map[string]bool{}
		var tick <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				rel, err := filepath.Rel(x.dir, ev.Name)
				if err != nil || strings.HasPrefix(rel, "..") {
					continue
				}
				rel = filepath.ToSlash(rel)
				if path.Base(rel) == ".gitignore" {
					// Files already indexed stay until they change.
					x.forgetIgnores()
				}
				if ev.Has(fsnotify.Create) {
					if fi, err := x.root.Lstat(filepath.FromSlash(rel)); err == nil && fi.IsDir() {
						if !x.pathSkipped(rel + "/x") {
							x.watchTree(w, rel)
							for _, p := range x.filesUnder(rel) {
								pending[p] = true
							}
						}
						continue
					}
				}
				pending[rel] = true
				if tick == nil {
					tick = time.After(100 * time.Millisecond)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if onError != nil {
					onError(err)
				}
			case <-tick:
				tick = nil
				rels := make([]string, 0, len(pending))
				for p := range pending {
					rels = append(rels, p)
				}
				clear(pending)
				slices.Sort(rels)
				if err := x.Update(ctx, rels...); err != nil && onError != nil {
					onError(err)
				}
			}
		}
	}()
	return nil
}

func (x *Index) watchTree(w *fsnotify.Watcher, rel string) {
	_ = filepath.WalkDir(filepath.Join(x.dir, filepath.FromSlash(rel)), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		r, _ := filepath.Rel(x.dir, p)
		r = filepath.ToSlash(r)
		if x.skipDir(r, d.Name()) {
			return filepath.SkipDir
		}
		_ = w.Add(p) // past the kernel's watch limit, a directory goes unwatched
		return nil
	})
}

func (x *Index) filesUnder(rel string) []string {
	var out []string
	_ = filepath.WalkDir(filepath.Join(x.dir, filepath.FromSlash(rel)), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			r, _ := filepath.Rel(x.dir, p)
			out = append(out, path.Clean(filepath.ToSlash(r)))
		}
		return nil
	})
	return out
}

// Close stops watching and releases the workspace.
func (x *Index) Close() error {
	x.mu.Lock()
	w, done := x.watcher, x.done
	x.watcher = nil
	x.mu.Unlock()
	if w != nil {
		w.Close()
		<-done
	}
	return x.root.Close()
}
