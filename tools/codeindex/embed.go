package codeindex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

// Embedder turns texts into vectors through an OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama, LM Studio, vLLM...).
type Embedder struct {
	BaseURL string // e.g. http://localhost:11434/v1
	Model   string
	APIKey  string
	Client  *http.Client
	// Batch is how many texts go in one request; 64 when 0.
	Batch int
}

// maxEmbedText bounds one text sent to the endpoint (most models take a
// few thousand tokens).
const maxEmbedText = 8000

// Embed returns one normalized vector per text, in order.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	batch := e.Batch
	if batch <= 0 {
		batch = 64
	}
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += batch {
		vs, err := e.embedBatch(ctx, texts[i:min(len(texts), i+batch)])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	in := make([]string, len(texts))
	for i, t := range texts {
		if len(t) > maxEmbedText {
			t = t[:maxEmbedText]
		}
		in[i] = t
	}
	body, err := json.Marshal(map[string]any{"model": e.Model, "input": in})
	if err != nil {
		return nil, err
	}
	url := strings.TrimSuffix(e.BaseURL, "/") + "/embeddings"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint %q: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	client := e.Client
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: %w", url, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("embeddings endpoint %s answered %s: %.300s", url, resp.Status, raw)
	}
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("embeddings endpoint %s: not an embeddings response: %v", url, err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings endpoint %s returned %d vectors for %d texts", url, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	dim := -1
	for i, d := range r.Data {
		idx := d.Index
		if idx < 0 || idx >= len(texts) || out[idx] != nil {
			idx = i // servers that leave index out
		}
		if dim < 0 {
			dim = len(d.Embedding)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != dim {
			return nil, fmt.Errorf("embeddings endpoint %s returned vectors of different sizes", url)
		}
		out[idx] = normalize(d.Embedding)
	}
	for _, v := range out {
		if v == nil {
			return nil, fmt.Errorf("embeddings endpoint %s returned duplicate indexes", url)
		}
	}
	return out, nil
}

func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return v
	}
	n := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}
