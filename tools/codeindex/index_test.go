package codeindex

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const goSrc = `// Package auth checks users.
package auth

import "errors"

// ErrDenied is returned for a bad password.
var ErrDenied = errors.New("denied")

// CheckPassword compares a password with its bcrypt hash.
func CheckPassword(hash, password string) error {
	if hash == "" {
		return ErrDenied
	}
	return nil
}

type Session struct {
	UserID string
}
`

func TestSplitGoAlongDeclarations(t *testing.T) {
	got := Split("auth/auth.go", []byte(goSrc))
	want := [][2]int{{1, 4}, {6, 7}, {9, 15}, {17, 19}}
	if len(got) != len(want) {
		t.Fatalf("Split = %+v", got)
	}
	for i, c := range got {
		if c.StartLine != want[i][0] || c.EndLine != want[i][1] {
			t.Errorf("chunk %d lines %d-%d, want %d-%d", i, c.StartLine, c.EndLine, want[i][0], want[i][1])
		}
	}
	if !strings.HasPrefix(got[2].Text, "// CheckPassword compares") || !strings.HasSuffix(got[2].Text, "}") {
		t.Errorf("the function chunk is %q, want the function with its doc comment", got[2].Text)
	}
	// A file that does not parse falls back to blocks; a long definition is cut.
	long := "func F() {\n" + strings.Repeat("\tx++\n", 300) + "}\n"
	chunks := Split("f.go", []byte("package f\n\n"+long))
	for _, c := range chunks {
		if c.EndLine-c.StartLine+1 > maxChunkLines {
			t.Errorf("chunk of %d lines", c.EndLine-c.StartLine+1)
		}
	}
	if last := chunks[len(chunks)-1]; last.EndLine != 304 {
		t.Errorf("last chunk ends at %d, want 304", last.EndLine)
	}
	if c := Split("broken.go", []byte("package x\nfunc {\n")); len(c) != 1 || c[0].EndLine != 2 {
		t.Errorf("unparsable Go: %+v", c)
	}
}

func TestSplitIdent(t *testing.T) {
	for in, want := range map[string]string{"parseHTTPRequest": "parse HTTP Request", "snake_case_name": "snake case name", "X": "X", "ID2Name": "ID2 Name"} {
		if got := strings.Join(splitIdent(in), " "); got != want {
			t.Errorf("splitIdent(%q) = %q, want %q", in, got, want)
		}
	}
}

func lexicalWS(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"auth/auth.go":            goSrc,
		"billing/invoice.py":      "def total(items):\n    return sum(i.price for i in items)\n\n\ndef tax(amount):\n    return amount * 0.2\n",
		"web/login.ts":            "export function renderLoginForm() {\n  return '<form>password</form>';\n}\n",
		"node_modules/x/index.js": "function CheckPassword() {}\n",
		".git/config":             "CheckPassword\n",
		"ignored/secret.go":       "package ignored // CheckPassword\n",
		".gitignore":              "ignored/\n",
		"bin.dat":                 "CheckPassword\x00\x01",
	})
	return dir
}

func TestBM25Search(t *testing.T) {
	dir := lexicalWS(t)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"id_rsa": "PRIVATE KEY CheckPassword\n"})
	if err := os.Symlink(filepath.Join(outside, "id_rsa"), filepath.Join(dir, "key.txt")); err != nil {
		t.Fatal(err)
	}
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	rs, err := x.Search(context.Background(), "check the password hash", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || rs[0].FilePath != "auth/auth.go" || rs[0].StartLine != 9 || rs[0].EndLine != 15 {
		t.Fatalf("best result = %+v, want CheckPassword in auth/auth.go lines 9-15", rs)
	}
	for _, r := range rs {
		switch {
		case strings.HasPrefix(r.FilePath, "node_modules/"), strings.HasPrefix(r.FilePath, ".git/"),
			strings.HasPrefix(r.FilePath, "ignored/"), r.FilePath == "bin.dat":
			t.Errorf("%s should not be indexed", r.FilePath)
		case strings.Contains(r.CodeChunk, "PRIVATE KEY"):
			t.Fatalf("a symlink to a file outside the workspace was indexed: %+v", r)
		}
	}
	rs, _ = x.Search(context.Background(), "password", "web", 10)
	if len(rs) != 1 || rs[0].FilePath != "web/login.ts" {
		t.Errorf("search within web/ = %+v", rs)
	}
	if rs, _ := x.Search(context.Background(), "zzzunknownzzz", "", 10); len(rs) != 0 {
		t.Errorf("unknown word found %+v", rs)
	}
}

// fakeEmbeddings is a deterministic OpenAI-compatible embeddings server:
// each text becomes a bag of hashed words in 64 dimensions, so texts that
// share words are close.
func fakeEmbeddings(t testing.TB, calls *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", 400)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "fake-embed" {
			http.Error(w, "bad body", 400)
			return
		}
		calls.Add(int64(len(req.Input)))
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			v := make([]float32, 64)
			tokenize(in, func(tok string) {
				h := fnv.New32a()
				h.Write([]byte(tok))
				v[h.Sum32()%64]++
			})
			data = append(data, item{"embedding", i, v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestEmbeddingSearchAndStore(t *testing.T) {
	dir := lexicalWS(t)
	var calls atomic.Int64
	srv := fakeEmbeddings(t, &calls)
	store := filepath.Join(dir, ".orchestration", "index")
	opts := Options{Embedder: &Embedder{BaseURL: srv.URL + "/v1", Model: "fake-embed", APIKey: "k"}, StoreDir: store}
	x, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := calls.Load()
	rs, err := x.Search(context.Background(), "tax amount", "", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 || rs[0].FilePath != "billing/invoice.py" || rs[0].Score <= 0 || rs[0].Score > 1.0001 {
		t.Fatalf("results = %+v, want billing/invoice.py first with a cosine score", rs)
	}
	x.Close()
	if _, err := os.Stat(filepath.Join(store, "manifest.json")); err != nil {
		t.Fatalf("no vector store under .orchestration/index: %v", err)
	}
	// Reopened, only the changed file is embedded again.
	writeFiles(t, dir, map[string]string{"web/login.ts": "export function logout() {}\n"})
	calls.Store(0)
	x, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("reopening embedded %d chunks (first build: %d), want only the changed one", got, first)
	}
	rs, _ = x.Search(context.Background(), "logout", "web", 5)
	if len(rs) != 1 || !strings.Contains(rs[0].CodeChunk, "logout") {
		t.Errorf("after the change: %+v", rs)
	}
	// An endpoint that fails is an error, not an empty result.
	bad := &Embedder{BaseURL: srv.URL + "/nope", Model: "fake-embed", APIKey: "k"}
	if _, err := bad.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("failing endpoint: %v", err)
	}
}

func TestWatchKeepsFresh(t *testing.T) {
	dir := lexicalWS(t)
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := x.Watch(context.Background(), func(err error) { t.Log(err) }); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"newpkg/quux.go": "package newpkg\n\nfunc Quuxify() {}\n"})
	if err := os.Remove(filepath.Join(dir, "web/login.ts")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, _ := x.Search(context.Background(), "quuxify", "", 5)
		b, _ := x.Search(context.Background(), "renderLoginForm", "", 5)
		if len(a) == 1 && a[0].FilePath == "newpkg/quux.go" && len(b) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index did not follow the changes: new file %+v, deleted file %+v", a, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("a.go", goSrc)
	f.Add("a.py", "def a():\n  pass\n\n\ndef b():\n  pass\n")
	f.Add("a.txt", "\n\n\n")
	f.Fuzz(func(t *testing.T, name, src string) {
		n := strings.Count(strings.TrimSuffix(src, "\n"), "\n") + 1
		for _, c := range Split(name, []byte(src)) {
			if c.StartLine < 1 || c.EndLine < c.StartLine || c.EndLine > n || c.EndLine-c.StartLine >= maxChunkLines {
				t.Fatalf("Split(%q): chunk %d-%d of %d lines", src, c.StartLine, c.EndLine, n)
			}
		}
	})
}

// BenchmarkBuild10k indexes 10,000 generated files without embeddings.
func BenchmarkBuild10k(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{}
	for i := range 10_000 {
		files[fmt.Sprintf("pkg%03d/file%05d.go", i%100, i)] = fmt.Sprintf(
			"package pkg%03d\n\n// Handler%d serves request %d.\nfunc Handler%d(w Writer, r *Request) error {\n\tif r == nil {\n\t\treturn errNil\n\t}\n\treturn w.Write(r.Body%d)\n}\n\ntype Model%d struct {\n\tID   int\n\tName string\n}\n", i%100, i, i, i, i, i)
	}
	writeFiles(b, dir, files)
	b.ResetTimer()
	for range b.N {
		x, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := x.Build(context.Background()); err != nil {
			b.Fatal(err)
		}
		if x.Files() != 10_000 {
			b.Fatalf("%d files indexed", x.Files())
		}
		b.StopTimer()
		start := time.Now()
		const queries = 100
		for q := range queries {
			if _, err := x.Search(context.Background(), fmt.Sprintf("handler serves request %d writer", q), "", 10); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/queries/1000, "ms/query")
		x.Close()
		b.StartTimer()
	}
}

// Nested .gitignore files and git's info/exclude count as they do for
// list_files and search_files: a directory's own file applies below it only,
// and a deeper negation wins over a shallower rule. Files arriving later
// (Update) are judged the same way.
func TestNestedIgnoreFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".gitignore":              "*.log\n",
		".git/info/exclude":       "private/\n",
		"web/.gitignore":          "generated/\n*.gen.ts\n!keep.gen.ts\n",
		"web/page.ts":             "export const zebraword = 1\n",
		"web/a.gen.ts":            "export const zebraword = 2\n",
		"web/keep.gen.ts":         "export const zebraword = 3\n",
		"web/generated/api.ts":    "export const zebraword = 4\n",
		"web/deep/b.gen.ts":       "export const zebraword = 5\n",
		"app/a.gen.ts":            "export const zebraword = 6\n",
		"app/.gitignore":          "!*.log\n",
		"app/run.log":             "zebraword 7\n",
		"docs/notes.log":          "zebraword 8\n",
		"private/x.go":            "package private // zebraword\n",
		"app/vendored/.gitignore": "*\n",
		"app/vendored/lib.go":     "package lib // zebraword\n",
	})
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	if err := x.Build(ctx); err != nil {
		t.Fatal(err)
	}
	found := func() string {
		rs, err := x.Search(ctx, "zebraword", "", 50)
		if err != nil {
			t.Fatal(err)
		}
		var ps []string
		for _, r := range rs {
			ps = append(ps, r.FilePath)
		}
		slices.Sort(ps)
		return strings.Join(ps, " ")
	}
	if got, want := found(), "app/a.gen.ts app/run.log web/keep.gen.ts web/page.ts"; got != want {
		t.Errorf("indexed %q, want %q", got, want)
	}
	writeFiles(t, dir, map[string]string{
		"web/c.gen.ts": "export const zebraword = 9\n",
		"app/c.gen.ts": "export const zebraword = 10\n",
	})
	if err := x.Update(ctx, "web/c.gen.ts", "app/c.gen.ts"); err != nil {
		t.Fatal(err)
	}
	if got, want := found(), "app/a.gen.ts app/c.gen.ts app/run.log web/keep.gen.ts web/page.ts"; got != want {
		t.Errorf("after Update, indexed %q, want %q", got, want)
	}
}
