package mcp

import (
	"context"
	"time"
)

// listPages reads a listing page by page: list gets the page at cursor (""
// for the first) and returns its items, the next cursor and its cache
// hint in milliseconds. keep takes each item and returns false once it
// has enough. It stops at a page without a next cursor, at a cursor seen
// before and after maxListPages pages. It returns the shortest hint of
// the pages read, -1 when no page was read.
func listPages[T any](ctx context.Context, list func(ctx context.Context, cursor string) ([]T, string, int, error), keep func(T) bool) (time.Duration, error) {
	fresh := time.Duration(-1)
	cursor := ""
	seen := map[string]bool{}
	for range maxListPages {
		items, next, ttlMs, err := list(ctx, cursor)
		if err != nil {
			return fresh, err
		}
		fresh = shortestHint(fresh, time.Duration(max(ttlMs, 0))*time.Millisecond)
		for _, it := range items {
			if !keep(it) {
				return fresh, nil
			}
		}
		if next == "" || seen[next] {
			break
		}
		seen[next] = true
		cursor = next
	}
	return fresh, nil
}

// shortestHint is the shortest of the cache hints that were given (those
// not negative), -1 when none was.
func shortestHint(hints ...time.Duration) time.Duration {
	fresh := time.Duration(-1)
	for _, h := range hints {
		if h >= 0 && (fresh < 0 || h < fresh) {
			fresh = h
		}
	}
	return fresh
}
