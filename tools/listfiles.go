package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/intentgate/intentgate/engine"
	"golang.org/x/text/unicode/norm"
)

// DefaultListLimit is how many entries list_files shows, as in Roo Code.
const DefaultListLimit = 200

// ListOptions configure list_files.
type ListOptions struct {
	Limit int // entries shown at most; DefaultListLimit when 0
}

// ListFiles is list_files(path, recursive?): the entries of a directory, or
// with recursive its whole tree, relative to it, directories with a trailing
// "/". As in Roo Code, .gitignore'd entries and the usual dependency and
// build directories (node_modules, dist, vendor, .git...) are left out,
// except that a listing of one level shows gitignored files, as Roo's does;
// hidden files are listed, and so are hidden directories, though a recursive
// listing does not go into them unless the listed directory is hidden
// itself. When the limit is reached the list says so.
func ListFiles(opts ListOptions) engine.Tool {
	if opts.Limit <= 0 {
		opts.Limit = DefaultListLimit
	}
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		dir, err := DirTarget(c)
		if err != nil {
			return nil, err
		}
		recursive, err := boolArg(c, "recursive")
		if err != nil {
			return nil, err
		}
		if err := checkDir(c, dir); err != nil {
			return nil, err
		}
		t, err := openTree(c)
		if err != nil {
			return nil, err
		}
		defer t.close()
		entries, truncated, err := listTree(ctx, t, dir, recursive, opts.Limit)
		if err != nil {
			return nil, err
		}
		return &engine.Result{Output: formatFileList(entries, truncated)}, nil
	})
}

// checkDir refuses a path that is not a directory of the workspace.
func checkDir(c *engine.Call, dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := c.WS.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Path: dir, Parameter: "path",
			Message: dir + " is a file, not a directory",
			Hint:    "give the directory that holds it, or read it with read_file"}
	}
	return nil
}

// listTree walks dir breadth first and returns entries relative to it, the
// way Roo Code's listFiles fills its limit: files first (ripgrep's part),
// then directories in the room left; a truncated recursive listing still
// shows every directory of the first level, in place of the last entries.
func listTree(ctx context.Context, t *tree, dir string, recursive bool, limit int) ([]string, bool, error) {
	base := path.Base("/" + dir)
	hiddenTarget := false
	for _, p := range splitParts(dir) {
		hiddenTarget = hiddenTarget || isHidden(p)
	}
	except := ""
	if isDefaultIgnored(dir, base, "") && dir != "" {
		except = base
	}
	// Roo Code lists a hidden or an ignored directory named explicitly
	// without ignore files (rg --no-ignore); so does a gitignored one.
	t.noIgnore = hiddenTarget || except != ""
	ps := t.ignoresAbove(dir)
	if ignored(ps, dir, true) {
		t.noIgnore, ps = true, nil
	}
	type item struct {
		rel string
		ps  []ignorePattern
	}
	queue := []item{{dir, ps}}
	var files, dirs, firstDirs []string
	shown := func(rel string) string { return strings.TrimPrefix(strings.TrimPrefix(rel, dir), "/") }
	for len(queue) > 0 && len(files) < limit {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		cur := queue[0]
		queue = queue[1:]
		ents, err := t.readDir(cur.rel)
		if err != nil && cur.rel == dir {
			return nil, false, fmt.Errorf("list %s: %w", displayDir(dir), unwrapPath(err))
		}
		for _, e := range ents {
			rel := joinRel(cur.rel, e.Name())
			if !entryIsDir(e) {
				// Roo Code lists one level with rg -g '*', and a glob
				// overrides ignore files: gitignored files show there
				// (gitignored directories do not).
				if (!recursive || !ignoredEntry(cur.ps, rel, false)) && len(files) < limit {
					files = append(files, shown(rel))
				}
				continue
			}
			if isDefaultIgnored(rel, e.Name(), except) || ignoredEntry(cur.ps, rel, true) {
				continue
			}
			if len(dirs) < limit {
				dirs = append(dirs, shown(rel)+"/")
			}
			if cur.rel == dir {
				firstDirs = append(firstDirs, shown(rel)+"/")
			}
			if recursive && (!isHidden(e.Name()) || hiddenTarget) {
				queue = append(queue, item{rel, t.within(cur.ps, rel)})
			}
		}
	}
	out := append(files, dirs[:min(len(dirs), limit-len(files))]...)
	// Roo Code reports the limit as reached when the list is full, even
	// if nothing was left out.
	truncated := len(out) >= limit
	if !truncated || !recursive {
		return out, truncated, nil
	}
	var missing []string
	for _, d := range firstDirs {
		if !slices.Contains(out, d) {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return out, true, nil
	}
	out = out[:len(out)-min(len(missing), len(out))]
	var first, deeper []string
	for _, e := range out {
		if strings.Count(strings.TrimSuffix(e, "/"), "/") == 0 {
			first = append(first, e)
		} else {
			deeper = append(deeper, e)
		}
	}
	out = append(append(first, missing...), deeper...)
	return out[:min(len(out), limit)], true, nil
}

func displayDir(dir string) string {
	if dir == "" {
		return "the workspace root"
	}
	return dir
}

// formatFileList is Roo Code's formatFilesList: entries sorted so that each
// directory's contents follow it, files before subdirectories at each level,
// names compared the way localeCompare with numeric collation does.
func formatFileList(entries []string, truncated bool) string {
	sort.SliceStable(entries, func(i, j int) bool { return compareListed(entries[i], entries[j]) < 0 })
	switch {
	case truncated:
		return strings.Join(entries, "\n") +
			"\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)"
	case len(entries) == 0:
		return "No files found."
	}
	return strings.Join(entries, "\n")
}

// compareListed orders two listed paths ("a/b", "a/") as Roo Code does: at
// the first differing component, a path that ends there comes first, then
// names compare by collation.
func compareListed(a, b string) int {
	ap, bp := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < min(len(ap), len(bp)); i++ {
		if ap[i] == bp[i] {
			continue
		}
		if i+1 == len(ap) && i+1 < len(bp) {
			return -1
		}
		if i+1 == len(bp) && i+1 < len(ap) {
			return 1
		}
		if c := collate(ap[i], bp[i]); c != 0 {
			return c
		}
		return strings.Compare(ap[i], bp[i])
	}
	return len(ap) - len(bp)
}

// collate approximates localeCompare(a, b, undefined, {numeric: true,
// sensitivity: "base"}) under the root collation: case is ignored, runs of
// digits compare by value, and punctuation sorts before digits, which sort
// before letters, in the order of the Unicode collation table.
func collate(a, b string) int {
	for a != "" && b != "" {
		ra, _ := utf8.DecodeRuneInString(a)
		rb, _ := utf8.DecodeRuneInString(b)
		if isASCIIDigit(ra) && isASCIIDigit(rb) {
			da, db := digitRun(a), digitRun(b)
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if ka, kb := collationKey(ra), collationKey(rb); ka != kb {
			if ka < kb {
				return -1
			}
			return 1
		}
		a, b = a[utf8.RuneLen(ra):], b[utf8.RuneLen(rb):]
	}
	return len(a) - len(b)
}

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }

func digitRun(s string) string {
	i := 0
	for i < len(s) && isASCIIDigit(rune(s[i])) {
		i++
	}
	return s[:i]
}

// collationPunct is the root collation order of ASCII punctuation and
// symbols.
const collationPunct = "\t\n\v\f\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"

// collationKey maps a rune to a sortable key: whitespace and punctuation,
// then digits, then letters without regard to case, then everything else by
// code point.
func collationKey(r rune) int {
	if i := strings.IndexRune(collationPunct, r); i >= 0 {
		return i
	}
	const digits, letters, other = 100, 200, 1000
	switch {
	case isASCIIDigit(r):
		return digits + int(r-'0')
	case 'a' <= r && r <= 'z':
		return letters + int(r-'a')
	case 'A' <= r && r <= 'Z':
		return letters + int(r-'A')
	}
	// Accents do not count at base sensitivity: é sorts as e.
	if d := []rune(norm.NFD.String(string(r))); len(d) > 1 && d[0] < utf8.RuneSelf {
		return collationKey(d[0])
	}
	return other + int(unicode.ToLower(r))
}
