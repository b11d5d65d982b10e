// Package nearest finds the name a mistyped one was meant to be: the CLI's flags, the storage
// options' keys.
package nearest

// Name returns the name of names nearest to typed by edit distance when it is within a slip of
// a key or two (a letter left out, two swapped: at most a third of typed's length, between 1
// and 3), "" otherwise. Of names equally near, the first in byte order.
func Name(typed string, names []string) string {
	best, bestDist := "", 0
	for _, name := range names {
		d := Distance(typed, name)
		if best == "" || d < bestDist || d == bestDist && name < best {
			best, bestDist = name, d
		}
	}
	if best != "" && bestDist <= max(1, min(3, len(typed)/3)) {
		return best
	}
	return ""
}

// Distance is the Levenshtein distance of a and b, in runes.
func Distance(as, bs string) int {
	a, b := []rune(as), []rune(bs)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
