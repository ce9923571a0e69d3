package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/tools/codeindex"
)

// CodebaseSearchResult is codebase_search's structured answer, Roo Code's
// shape: the query and the chunks found.
type CodebaseSearchResult struct {
	Query   string             `json:"query"`
	Results []codeindex.Result `json:"results"`
}

// CodebaseSearchOptions configure codebase_search.
type CodebaseSearchOptions struct {
	// MaxResults is how many chunks an answer holds; 20 when 0.
	MaxResults int
	// NoWatch leaves the index as built (tests, one-shot front doors).
	NoWatch bool
	// Getenv reads the API key's variable; os.Getenv when nil.
	Getenv func(string) string
}

// CodebaseSearch is codebase_search(query, path?): the chunks of the
// workspace's code closest to the query, by meaning when config.yaml names
// an embeddings endpoint, by BM25 otherwise. The index is built on the first
// call and then follows file changes.
func CodebaseSearch(opts CodebaseSearchOptions) engine.Tool {
	if opts.MaxResults <= 0 {
		opts.MaxResults = 20
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	var mu sync.Mutex
	indexes := map[string]*codeindex.Index{}
	get := func(ctx context.Context, c *engine.Call) (*codeindex.Index, error) {
		mu.Lock()
		defer mu.Unlock()
		if x := indexes[c.WS.Dir]; x != nil {
			return x, nil
		}
		cfg, err := loadToolConfig(c.WS)
		if err != nil {
			return nil, err
		}
		io := codeindex.Options{}
		if e := cfg.CodebaseSearch.Embeddings; e.BaseURL != "" {
			if e.Model == "" {
				return nil, fmt.Errorf("%s: codebase_search.embeddings.model is missing; name the embedding model the endpoint serves", configPath)
			}
			key := ""
			if e.APIKeyEnv != "" {
				key = opts.Getenv(e.APIKeyEnv)
			}
			io.Embedder = &codeindex.Embedder{BaseURL: e.BaseURL, Model: e.Model, APIKey: key}
			io.StoreDir = filepath.Join(c.WS.Dir, ".orchestration", "index")
		}
		x, err := codeindex.Open(c.WS.Dir, io)
		if err != nil {
			return nil, err
		}
		if err := x.Build(ctx); err != nil {
			x.Close()
			return nil, fmt.Errorf("indexing the workspace: %w", err)
		}
		if !opts.NoWatch {
			// Freshness is best effort: a directory past the kernel's watch
			// limit is re-read on the next start.
			_ = x.Watch(context.Background(), nil)
		}
		indexes[c.WS.Dir] = x
		return x, nil
	}
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		query, err := c.Require("query")
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(query) == "" {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "query",
				Message: "the query is empty", Hint: "describe in words what the code you are looking for does"}
		}
		prefix := ""
		if p, ok, err := c.String("path"); err != nil {
			return nil, err
		} else if ok && strings.TrimSpace(p) != "" {
			prefix, err = c.WS.Canonical(dirPath(p))
			if err != nil {
				return nil, err
			}
		}
		x, err := get(ctx, c)
		if err != nil {
			return nil, err
		}
		rs, err := x.Search(ctx, query, prefix, opts.MaxResults)
		if err != nil {
			return nil, fmt.Errorf("codebase_search: %w", err)
		}
		res := CodebaseSearchResult{Query: query, Results: rs}
		if res.Results == nil {
			res.Results = []codeindex.Result{}
		}
		data := map[string]any{"codebase_search": res}
		if len(rs) == 0 {
			return &engine.Result{Output: "No relevant code snippets found for the query: \"" + query + "\"", Data: data}, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Query: %s\nResults:\n", query)
		for i, r := range rs {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "File path: %s\nScore: %s\nLines: %d-%d\nCode Chunk: %s\n",
				r.FilePath, strconv.FormatFloat(r.Score, 'f', -1, 64), r.StartLine, r.EndLine, r.CodeChunk)
		}
		return &engine.Result{Output: b.String(), Data: data}, nil
	})
}
