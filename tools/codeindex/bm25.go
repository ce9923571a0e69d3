package codeindex

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// bm25 is an inverted index over chunks, scored with Okapi BM25.
type bm25 struct {
	k1, b    float64
	docs     []bm25Doc
	postings map[string][]posting
	totalLen int
	live     int
}

type bm25Doc struct {
	length int
	dead   bool
}

type posting struct {
	doc  int
	freq int
}

func newBM25() *bm25 { return &bm25{k1: 1.2, b: 0.75, postings: map[string][]posting{}} }

// add indexes text as a new document and returns its number.
func (x *bm25) add(text string) int {
	id := len(x.docs)
	freq := map[string]int{}
	n := 0
	tokenize(text, func(t string) { freq[t]++; n++ })
	for t, f := range freq {
		x.postings[t] = append(x.postings[t], posting{id, f})
	}
	x.docs = append(x.docs, bm25Doc{length: n})
	x.totalLen += n
	x.live++
	return id
}

// remove marks a document gone; its postings are skipped until compact.
func (x *bm25) remove(id int) {
	if id < 0 || id >= len(x.docs) || x.docs[id].dead {
		return
	}
	x.docs[id].dead = true
	x.totalLen -= x.docs[id].length
	x.live--
}

type scored struct {
	doc   int
	score float64
}

// search returns up to n documents by descending score; keep filters them.
func (x *bm25) search(query string, n int, keep func(doc int) bool) []scored {
	if x.live == 0 {
		return nil
	}
	avg := float64(x.totalLen) / float64(x.live)
	scores := map[int]float64{}
	seen := map[string]bool{}
	tokenize(query, func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		ps := x.postings[t]
		df := 0
		for _, p := range ps {
			if !x.docs[p.doc].dead {
				df++
			}
		}
		if df == 0 {
			return
		}
		idf := math.Log(1 + (float64(x.live)-float64(df)+0.5)/(float64(df)+0.5))
		for _, p := range ps {
			d := x.docs[p.doc]
			if d.dead {
				continue
			}
			f := float64(p.freq)
			scores[p.doc] += idf * f * (x.k1 + 1) / (f + x.k1*(1-x.b+x.b*float64(d.length)/avg))
		}
	})
	out := make([]scored, 0, len(scores))
	for d, s := range scores {
		if keep == nil || keep(d) {
			out = append(out, scored{d, s})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].doc < out[j].doc
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// tokenize splits text into lowercase terms: identifiers whole and in their
// camelCase and snake_case parts, so "parseHTTPRequest" matches "request".
func tokenize(text string, emit func(string)) {
	word := make([]rune, 0, 32)
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := string(word)
		word = word[:0]
		if len(w) > 64 {
			return
		}
		lw := strings.ToLower(w)
		parts := splitIdent(w)
		if len(lw) > 1 {
			emit(lw)
		}
		if len(parts) > 1 {
			for _, p := range parts {
				if len(p) > 1 {
					emit(strings.ToLower(p))
				}
			}
		}
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			word = append(word, r)
			continue
		}
		flush()
	}
	flush()
}

// splitIdent cuts an identifier at underscores and case changes:
// "parseHTTPRequest" -> parse, HTTP, Request.
func splitIdent(w string) []string {
	var parts []string
	rs := []rune(w)
	start := 0
	for i := 1; i <= len(rs); i++ {
		cut := i == len(rs) || rs[i] == '_' ||
			(unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])) && unicode.IsUpper(rs[i]) ||
			i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
		if cut {
			if p := strings.Trim(string(rs[start:i]), "_"); p != "" {
				parts = append(parts, p)
			}
			start = i
		}
	}
	return parts
}
