package tools

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

var searchFiles = map[string]string{
	"auth/auth.go":       "package auth\n\n// CheckPassword compares a password with its hash.\nfunc CheckPassword(hash, password string) bool {\n\treturn hash == password\n}\n",
	"billing/invoice.py": "def tax(amount):\n    return amount * 0.2\n",
}

func TestCodebaseSearchBM25(t *testing.T) {
	ws := rtWorkspace(t, searchFiles)
	tool := CodebaseSearch(CodebaseSearchOptions{NoWatch: true})
	r, err := rtRun(t, ws, tool, "codebase_search", map[string]any{"query": "check password"})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Data["codebase_search"].(CodebaseSearchResult)
	if res.Query != "check password" || len(res.Results) != 1 || res.Results[0].FilePath != "auth/auth.go" ||
		res.Results[0].StartLine != 3 || res.Results[0].EndLine != 6 {
		t.Fatalf("result = %+v", res)
	}
	wantHead := "Query: check password\nResults:\nFile path: auth/auth.go\nScore: "
	if !strings.HasPrefix(r.Output, wantHead) || !strings.Contains(r.Output, "\nLines: 3-6\nCode Chunk: // CheckPassword compares") {
		t.Errorf("output = %q", r.Output)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"filePath":"auth/auth.go"`) || !strings.Contains(string(b), `"codeChunk":"// CheckPassword`) {
		t.Errorf("JSON = %s", b)
	}
	r, err = rtRun(t, ws, tool, "codebase_search", map[string]any{"query": "password", "path": "billing"})
	if err != nil || r.Output != `No relevant code snippets found for the query: "password"` {
		t.Errorf("search in billing/: %q, %v", r.Output, err)
	}
	for _, p := range []string{"..", "../x", "/etc"} {
		if _, err := rtRun(t, ws, tool, "codebase_search", map[string]any{"query": "x", "path": p}); rtCode(err) != engine.PathEscape {
			t.Errorf("path %q: %v, want PATH_ESCAPE", p, err)
		}
	}
	if _, err := rtRun(t, ws, tool, "codebase_search", map[string]any{"query": "  "}); rtCode(err) != engine.InvalidArgument {
		t.Errorf("empty query: %v", err)
	}
	if _, err := rtRun(t, ws, tool, "codebase_search", map[string]any{}); rtCode(err) != engine.MissingParameter {
		t.Errorf("no query: %v", err)
	}
}

func TestCodebaseSearchEmbeddings(t *testing.T) {
	// A deterministic embeddings server: 1 on the dimension of each
	// keyword a text contains.
	keywords := []string{"password", "tax", "amount", "hash"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sekret" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		var data []map[string]any
		for i, in := range req.Input {
			v := make([]float32, len(keywords)+1)
			v[len(keywords)] = 0.01
			for k, kw := range keywords {
				if strings.Contains(strings.ToLower(in), kw) {
					v[k] = 1
				}
			}
			data = append(data, map[string]any{"index": i, "embedding": v})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	defer srv.Close()
	files := map[string]string{".orchestration/config.yaml": "codebase_search:\n  embeddings:\n    base_url: " + srv.URL + "/v1\n    model: fake\n    api_key_env: FAKE_KEY\n"}
	for k, v := range searchFiles {
		files[k] = v
	}
	ws := rtWorkspace(t, files)
	tool := CodebaseSearch(CodebaseSearchOptions{NoWatch: true, Getenv: func(k string) string {
		if k == "FAKE_KEY" {
			return "sekret"
		}
		return ""
	}})
	r, err := rtRun(t, ws, tool, "codebase_search", map[string]any{"query": "how is the tax amount computed"})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Data["codebase_search"].(CodebaseSearchResult)
	if len(res.Results) == 0 || res.Results[0].FilePath != "billing/invoice.py" || res.Results[0].Score < 0.9 {
		t.Fatalf("results = %+v", res.Results)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, ".orchestration", "index", "manifest.json")); err != nil {
		t.Errorf("no index under .orchestration/index: %v", err)
	}
	// A broken config fails the call, naming the file.
	ws2 := rtWorkspace(t, map[string]string{".orchestration/config.yaml": "codebase_search: [\n", "a.go": "package a\n"})
	if _, err := rtRun(t, ws2, tool, "codebase_search", map[string]any{"query": "a"}); err == nil || !strings.Contains(err.Error(), "config.yaml") {
		t.Errorf("broken config: %v", err)
	}
}
