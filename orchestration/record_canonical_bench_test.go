package orchestration

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchLedgerLines makes n lines as the writer writes them for a busy
// workspace (the shape bench/genledger writes): a change of one file with
// a few hashed ranges, before and after hashes and deleted lines, and a
// refusal with its denial now and then.
func benchLedgerLines(tb testing.TB, n int) [][]byte {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	models := []string{"anthropic/claude-opus-4-5", "openai/gpt-5", "google/gemini-2.5-pro"}
	agents := []string{"claude-code", "codex", "gemini-cli"}
	hex := func() string {
		return fmt.Sprintf("%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())
	}
	t0 := time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC)
	out := make([][]byte, 0, n)
	for i := range n {
		in := RecordInput{
			Time:     t0.Add(time.Duration(i) * 9876543 * time.Microsecond),
			Revision: fmt.Sprintf("%016x%016x%08x", r.Uint64(), r.Uint64(), r.Uint32()), ToolVersion: "0.1.0",
			Model: models[r.IntN(len(models))],
			Path:  fmt.Sprintf("src/token%d/cache_%d.go", r.IntN(30), r.IntN(5000)),
			Meta: Meta{Intent: fmt.Sprintf("INT-%03d", 1+r.IntN(50)), Session: fmt.Sprintf("sess-%06d", r.IntN(9000)),
				CallID: fmt.Sprint(i + 1), Tool: "write_to_file", Agent: agents[r.IntN(len(agents))]},
		}
		if r.IntN(12) == 0 {
			in.Meta.Decision = DecisionDeny
			in.Meta.Denial = json.RawMessage(fmt.Sprintf(`{"error":"NOT_READ","intent":%q,"message":"%s: refused (NOT_READ)","path":%q,"tool":"write_to_file"}`,
				in.Meta.Intent, in.Path, in.Path))
		} else {
			in.Meta.Mutation = MutationModify
			in.Meta.BeforeSHA256, in.Meta.AfterSHA256 = hex(), hex()
			in.Meta.DeletedLines = 1 + r.IntN(40)
			line := 1 + r.IntN(50)
			for range 1 + r.IntN(3) {
				end := line + r.IntN(30)
				in.Ranges = append(in.Ranges, Range{StartLine: line, EndLine: end, ContentHash: "sha256:" + hex()})
				line = end + 2 + r.IntN(20)
			}
		}
		rec, err := NewRecord(in)
		if err != nil {
			tb.Fatal(err)
		}
		rec.Meta.Prev = "sha256:" + hex()
		b, err := MarshalShape(rec, ShapeAgentTrace)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// BenchmarkCanonViewRead reads realistic ledger lines in place, as trace
// stats, verify and blame's index do: one op is one line.
func BenchmarkCanonViewRead(b *testing.B) {
	lines := benchLedgerLines(b, 1024)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size / len(lines)))
	var v CanonView
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !v.Read(lines[i%len(lines)]) {
			b.Fatalf("not canonical: %s", lines[i%len(lines)])
		}
	}
}

// TestBenchLedgerLinesAreCanonical: the benchmark's lines are the writer's,
// read fast and agreeing with ParseRecord.
func TestBenchLedgerLinesAreCanonical(t *testing.T) {
	for _, l := range benchLedgerLines(t, 200) {
		if !checkCanonical(t, l) {
			t.Fatalf("not read fast: %s", l)
		}
	}
}
