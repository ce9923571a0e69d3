package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/gate"
)

// BenchmarkWrite compares a governed write_to_file (every policy, the ledger
// append and the intent map update, each durable) with a plain write of the
// same bytes, with and without fsync. Compare the sub-benchmarks with
// benchstat; the ratio is the price of governance per write.
func BenchmarkWrite(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		contents := [2][]byte{benchSource(size, 0), benchSource(size, 1)}
		b.Run(fmt.Sprintf("governed/%dKiB", size>>10), func(b *testing.B) {
			ws := benchWorkspace(b)
			g, err := gate.Open(ws, gate.Options{Version: version})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			ctx := context.Background()
			call := func(id, tool string, args map[string]any) {
				raw, _ := json.Marshal(args)
				c := &engine.Call{ID: id, Session: "bench", Tool: tool, Args: raw,
					Agent: engine.Agent{Name: "bench", Model: "bench/model"}}
				if _, err := g.Dispatch(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
			call("0", "select_active_intent", map[string]any{"intent_id": "INT-001"})
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				call(fmt.Sprint(i+1), "write_to_file", map[string]any{"path": "src/f.txt", "content": string(contents[i%2])})
			}
		})
		for _, sync := range []bool{false, true} {
			b.Run(fmt.Sprintf("plain/fsync=%v/%dKiB", sync, size>>10), func(b *testing.B) {
				p := filepath.Join(b.TempDir(), "f.txt")
				b.SetBytes(int64(size))
				for i := 0; i < b.N; i++ {
					f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := f.Write(contents[i%2]); err != nil {
						b.Fatal(err)
					}
					if sync {
						if err := f.Sync(); err != nil {
							b.Fatal(err)
						}
					}
					f.Close()
				}
			})
		}
	}
}

// benchSource is size bytes of source-like text in 40-byte lines; the two
// versions differ in every 20th line, like an edit that touches a few
// functions of a file.
func benchSource(size, version int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		v := 0
		if i%20 == 7 {
			v = version
		}
		fmt.Fprintf(&b, "\tx%06d := compute(%06d, %d) // ok   \n", i, i*7, v)
	}
	return b.Bytes()[:size]
}

func benchWorkspace(b *testing.B) string {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".orchestration"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	intents := "active_intents:\n  - id: INT-001\n    name: bench\n    status: IN_PROGRESS\n    owned_scope: [\"src/**\"]\n"
	if err := os.WriteFile(filepath.Join(dir, ".orchestration", "active_intents.yaml"), []byte(intents), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}
