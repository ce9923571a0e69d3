package audit

import "sort"

// align matches the elements of a with equal elements of b, in order, like a
// line diff: it returns, for each index of a, the index of b it is matched
// with or -1. Common prefixes and suffixes are matched first, then elements
// unique on both sides anchor the rest (patience diff); a gap without anchors
// is aligned by a longest common subsequence when it is small enough, and left
// unmatched when it is not (unmatched means "changed", never a wrong match).
func align(a, b []uint64) []int {
	ma := make([]int, len(a))
	for i := range ma {
		ma[i] = -1
	}
	alignRange(a, b, 0, len(a), 0, len(b), ma)
	return ma
}

func alignRange(a, b []uint64, alo, ahi, blo, bhi int, ma []int) {
	for alo < ahi && blo < bhi && a[alo] == b[blo] {
		ma[alo] = blo
		alo++
		blo++
	}
	for alo < ahi && blo < bhi && a[ahi-1] == b[bhi-1] {
		ma[ahi-1] = bhi - 1
		ahi--
		bhi--
	}
	if alo == ahi || blo == bhi {
		return
	}
	type seen struct{ na, nb, ia, ib int }
	count := make(map[uint64]*seen)
	for i := alo; i < ahi; i++ {
		s := count[a[i]]
		if s == nil {
			s = &seen{}
			count[a[i]] = s
		}
		s.na++
		s.ia = i
	}
	for j := blo; j < bhi; j++ {
		if s := count[b[j]]; s != nil {
			s.nb++
			s.ib = j
		}
	}
	var pairs [][2]int
	for _, s := range count {
		if s.na == 1 && s.nb == 1 {
			pairs = append(pairs, [2]int{s.ia, s.ib})
		}
	}
	if len(pairs) > 0 {
		sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
		chain := longestIncreasing(pairs)
		pa, pb := alo, blo
		for _, p := range chain {
			alignRange(a, b, pa, p[0], pb, p[1], ma)
			ma[p[0]] = p[1]
			pa, pb = p[0]+1, p[1]+1
		}
		alignRange(a, b, pa, ahi, pb, bhi, ma)
		return
	}
	n, m := ahi-alo, bhi-blo
	if n*m > 4<<20 {
		return
	}
	// Classic LCS table, walked back from the end.
	dp := make([]int32, (n+1)*(m+1))
	w := m + 1
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[alo+i] == b[blo+j] {
				dp[i*w+j] = dp[(i+1)*w+j+1] + 1
			} else {
				dp[i*w+j] = max(dp[(i+1)*w+j], dp[i*w+j+1])
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[alo+i] == b[blo+j]:
			ma[alo+i] = blo + j
			i++
			j++
		case dp[(i+1)*w+j] >= dp[i*w+j+1]:
			i++
		default:
			j++
		}
	}
}

// longestIncreasing returns the longest chain of pairs (sorted by their first
// element) whose second elements increase.
func longestIncreasing(pairs [][2]int) [][2]int {
	tails := []int{} // index into pairs of the smallest tail of each length
	prev := make([]int, len(pairs))
	for i, p := range pairs {
		k := sort.Search(len(tails), func(k int) bool { return pairs[tails[k]][1] >= p[1] })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([][2]int, len(tails))
	for i, k := len(tails)-1, tails[len(tails)-1]; i >= 0; i, k = i-1, prev[k] {
		out[i] = pairs[k]
	}
	return out
}
