package main

import (
	"slices"
	"strings"
)

// unknownSettings names the LEDGER_* variables of environ ("NAME=value")
// that ledger does not read, each with the setting it most likely meant:
// a misspelt LEDGER_STRIPE_WEBHOOK_SECRET would otherwise leave Stripe
// unconfigured without a word, every delivery answered 404.
func unknownSettings(environ []string) []string {
	var c Config
	var known []string
	for _, s := range c.settings() {
		known = append(known, s.name)
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "LEDGER_") || slices.Contains(known, name) {
			continue
		}
		msg := name + " is not a setting ledger reads"
		if near := nearest(name, known); near != "" {
			msg += " (did you mean " + near + "?)"
		}
		out = append(out, msg)
	}
	slices.Sort(out)
	return out
}

// nearest is the known name within a few edits of name, or "".
func nearest(name string, known []string) string {
	best, bestD := "", 4
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (ASCII names).
func editDistance(a, b string) int {
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
