package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tally-dev/tally/internal/text"
)

// A server may refuse a call until the user has opened pages (the error
// URLElicitationRequired, -32042, listing URL-mode requests): signing in
// to a third party the tool needs, say. pagesFirst shows each page as
// elicit does; once every one was accepted it waits, at most pageWait and
// with the call's timeout paused, for the server to say each is done
// (notifications/elicitation/complete, which a 2026-07-28 server over
// HTTP cannot send), and the call is tried again, once.

// pageWait bounds the wait for a server to say its pages are done.
const pageWait = 2 * time.Minute

// pagesFirst reports whether err is the server asking for pages first and
// they were opened, so the call should be tried again; a non-nil error
// says why it will not be.
func (s *server) pagesFirst(ctx context.Context, cs *sdk.ClientSession, err error) (bool, error) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != sdk.CodeURLElicitationRequired {
		return false, nil
	}
	var data struct {
		Elicitations []*sdk.ElicitParams `json:"elicitations"`
	}
	if len(rpcErr.Data) == 0 || json.Unmarshal(rpcErr.Data, &data) != nil || len(data.Elicitations) == 0 {
		return false, fmt.Errorf("the MCP server %q needs the user to open a page first but did not say which; tell the user", s.name)
	}
	var ids []string
	var waits []chan struct{}
	s.mu.Lock()
	for _, p := range data.Elicitations {
		if p == nil || p.ElicitationID == "" {
			continue
		}
		if s.pages == nil {
			s.pages = map[string]chan struct{}{}
		}
		ch := make(chan struct{})
		s.pages[p.ElicitationID] = ch
		ids, waits = append(ids, p.ElicitationID), append(waits, ch)
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for _, id := range ids {
			delete(s.pages, id)
		}
		s.mu.Unlock()
	}()
	for _, p := range data.Elicitations {
		if p == nil || (p.Mode != "" && p.Mode != "url") {
			return false, fmt.Errorf("the MCP server %q asked for something other than a page before the call; tell the user", s.name)
		}
		page := *p
		page.Mode = "url"
		res, err := s.elicit(ctx, &sdk.ElicitRequest{Params: &page})
		switch {
		case err != nil:
			return false, fmt.Errorf("the MCP server %q needs the user to open a page first, which Tally will not show (%s); tell the user", s.name, text.OneLine(err.Error(), 200))
		case res.Action != string(ActionAccept):
			return false, fmt.Errorf("the MCP server %q needs the user to open a page first (%s), and they did not; continue without this tool or ask the user", s.name, text.OneLine(page.Message, 120))
		}
	}
	if protocolOf(cs) >= modernProtocol && s.cfg.URL != "" {
		return true, nil // it cannot say when they are done: try again now
	}
	wctx, done := s.formContext(ctx)
	defer done()
	wctx, cancel := context.WithTimeout(wctx, pageWait)
	defer cancel()
	for _, ch := range waits {
		select {
		case <-ch:
		case <-wctx.Done():
			if ctx.Err() != nil {
				return false, errors.New("the call was cancelled while the user had a page of the MCP server to open")
			}
			s.log.Note("the server did not say its pages were done; the call is tried again all the same")
			return true, nil
		}
	}
	return true, nil
}
