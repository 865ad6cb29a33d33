package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
)

// MaxFallbacks is how many fallbacks a Chain may hold after its first
// model.
const MaxFallbacks = 3

// Link is one model of a Chain: a client for one endpoint, and the model
// name the requests sent to it carry.
type Link struct {
	// Model is the endpoint's own client, built with that endpoint's key
	// only: a Chain never sends one link's request to another's client,
	// so a profile's key reaches only its own base URL.
	Model Model
	// Name is the model the requests to a fallback carry; the first
	// link's requests keep the model they were given.
	Name string
	// Label names the link for people and the ledger, such as
	// "qwen3 (local)".
	Label string
	// CacheKey says the endpoint takes a prompt cache key: a request to
	// this fallback carries Request.Session as its key, and none
	// otherwise.
	CacheKey bool
}

// Chain is a Model that goes on with the next link when a request fails
// for good on the current one (see FailsForGood): the endpoint overloaded
// or failing after its retries, a rate limit longer than the wait allowed,
// the model gone, the server unreachable. The switch is announced through
// Callbacks.OnRetry (Retry.Fallback) before the request is sent again,
// and the answer that follows names it (Response.Fallback); every answer
// from a fallback names its model (Response.Model), so the ledger prices
// it at that model's prices.
//
// The switch holds for the rest of the Chain's life: the following
// requests start at the link that answered, since going back would start
// yet another cache prefix. Errors that a switch would not cure (a
// rejected key, a prompt too long, a stream cut after text was shown, a
// cancelled call) are returned as they are, as is the last link's error.
// It is safe for concurrent use.
type Chain struct {
	links  []Link
	active atomic.Int32
}

var _ Model = (*Chain)(nil)

// NewChain returns a Chain over first and then fallbacks, at most
// MaxFallbacks of them; the rest are an error, as is a link without a
// client or (past the first) a model name.
func NewChain(first Link, fallbacks ...Link) (*Chain, error) {
	if len(fallbacks) > MaxFallbacks {
		return nil, fmt.Errorf("a fallback chain holds at most %d profiles after the session's own, not %d; drop some", MaxFallbacks, len(fallbacks))
	}
	links := append([]Link{first}, fallbacks...)
	for i, l := range links {
		if l.Model == nil || (i > 0 && l.Name == "") {
			return nil, fmt.Errorf("fallback %d (%s) has no client or no model name; check that profile's endpoint and model", i, l.Label)
		}
	}
	return &Chain{links: links}, nil
}

// Active is the label of the link requests go to now.
func (c *Chain) Active() string { return c.links[c.active.Load()].Label }

// Stream implements Model: req goes to the active link, and on to the next
// while one fails for good.
func (c *Chain) Stream(ctx context.Context, req Request, cb Callbacks) (*Response, error) {
	i := int(c.active.Load())
	note := ""
	for {
		l := c.links[i]
		r := req
		if i > 0 {
			r.Model, r.CacheKey = l.Name, ""
			if l.CacheKey {
				r.CacheKey = req.Session
			}
		}
		resp, err := l.Model.Stream(ctx, r, cb)
		if err == nil {
			if i > 0 {
				resp.Model = l.Name
			}
			resp.Fallback = note
			return resp, nil
		}
		if i+1 >= len(c.links) || ctx.Err() != nil || !FailsForGood(err) {
			return resp, err
		}
		next := c.links[i+1]
		c.active.CompareAndSwap(int32(i), int32(i+1))
		reason, status := retryReason(err)
		if IsModelNotFound(err) {
			reason = "the model is not served"
		}
		note = fmt.Sprintf("%s → %s: %s", l.Label, next.Label, reason)
		cb.retry(Retry{Attempt: 1, MaxAttempts: 1, Reason: reason, Status: status, Fallback: l.Label + " → " + next.Label})
		i++
	}
}

// FailsForGood reports whether err means the endpoint cannot answer this
// request now, whatever is tried there: a transient failure that outlived
// its retries (HTTP 408, 429 and 5xx, an unreachable server, a stream cut
// or timed out before any output), a rate limit asking for a longer wait
// than allowed, any other 5xx, or a model the server does not know. A
// rejected key, a prompt too long, a reply too large, a stream cut after
// text was shown and a cancelled call are not: another endpoint would not
// cure them, or the user saw part of this answer already.
func FailsForGood(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		IsContextLengthExceeded(err) || IsUnauthorized(err) {
		return false
	}
	var tl tooLong
	var api *APIError
	switch {
	case IsRetryable(err), errors.As(err, &tl), IsModelNotFound(err):
		return true
	case errors.As(err, &api):
		return api.Status >= http.StatusInternalServerError
	}
	return false
}
