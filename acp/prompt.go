package acp

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/engine/mcp"
)

// promptText is the client's content blocks as the one message Tally's
// turn takes: text as it is, a file link as its workspace path ("@path"),
// an embedded file as a fenced block under its path; images go beside it,
// to be checked and sent as the app's pasted pictures are. Audio and
// binary attachments are refused (initialize does not offer them).
func promptText(blocks []acp.ContentBlock, ws string) (string, []images.Input, error) {
	var imgs []images.Input
	var b strings.Builder
	add := func(s string) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") && !strings.HasPrefix(s, "\n") {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	for _, bl := range blocks {
		switch {
		case bl.Text != nil:
			add(bl.Text.Text)
		case bl.ResourceLink != nil:
			add("@" + linkPath(bl.ResourceLink.Uri, ws))
		case bl.Resource != nil && bl.Resource.Resource.TextResourceContents != nil:
			r := bl.Resource.Resource.TextResourceContents
			b.WriteString("\n\n" + linkPath(r.Uri, ws) + ":\n" + fence(r.Text) + "\n")
		case bl.Resource != nil:
			return "", nil, &acp.RequestError{Code: codeInvalidParams, Message: "Tally takes text attachments only, not binary ones; attach the file as a link instead"}
		case bl.Image != nil:
			data, err := base64.StdEncoding.DecodeString(bl.Image.Data)
			if err != nil {
				return "", nil, &acp.RequestError{Code: codeInvalidParams, Message: "an image's data is not base64; attach the picture again"}
			}
			imgs = append(imgs, images.Input{Name: fmt.Sprintf("image %d from the editor", len(imgs)+1), Data: data})
		case bl.Audio != nil:
			return "", nil, &acp.RequestError{Code: codeInvalidParams, Message: "Tally takes text and images, not audio; describe what it says in words"}
		}
	}
	return b.String(), imgs, nil
}

// linkPath is a resource URI as the agent reads it: a file in the
// workspace by its relative path, any other file by its absolute path,
// anything else as it is.
func linkPath(uri, ws string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return uri
	}
	p := filepath.FromSlash(u.Path)
	if rel, err := filepath.Rel(ws, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return p
}

// addMCP adds the MCP servers the client passed to the user's own for
// this session; a server whose name the user's file already has keeps the
// user's. The demo model runs none.
func (s *Server) addMCP(cfg *agent.Config, servers []acp.McpServer) {
	if len(servers) == 0 || cfg.MCP.Off {
		return
	}
	user := cfg.MCP.User
	if user == nil {
		loaded, err := mcp.LoadUser()
		if err != nil {
			s.logf("the editor's MCP servers are not started: your MCP file cannot be read (%s); check it with tally mcp list", sentence(err.Error()))
			return
		}
		user = &loaded
	}
	merged := mcp.Config{Servers: make(map[string]mcp.ServerConfig, len(user.Servers)+len(servers))}
	for name, sc := range user.Servers {
		merged.Servers[name] = sc
	}
	for _, srv := range servers {
		name, sc, ok := serverConfig(srv)
		if !ok {
			continue
		}
		if _, dup := merged.Servers[name]; dup {
			s.logf("the editor's MCP server %q is not started: your MCP file has a server of that name", name)
			continue
		}
		merged.Servers[name] = sc
	}
	cfg.MCP.User = &merged
}

// serverConfig maps one of the client's MCP servers to Tally's form.
func serverConfig(srv acp.McpServer) (string, mcp.ServerConfig, bool) {
	switch {
	case srv.Stdio != nil && srv.Stdio.Command != "":
		sc := mcp.ServerConfig{Type: "stdio", Command: srv.Stdio.Command, Args: srv.Stdio.Args}
		if len(srv.Stdio.Env) > 0 {
			sc.Env = make(map[string]string, len(srv.Stdio.Env))
			for _, e := range srv.Stdio.Env {
				sc.Env[e.Name] = e.Value
			}
		}
		return srv.Stdio.Name, sc, srv.Stdio.Name != ""
	case srv.Http != nil && srv.Http.Url != "":
		return srv.Http.Name, mcp.ServerConfig{Type: "http", URL: srv.Http.Url, Headers: headers(srv.Http.Headers)}, srv.Http.Name != ""
	case srv.Sse != nil && srv.Sse.Url != "":
		return srv.Sse.Name, mcp.ServerConfig{Type: "sse", URL: srv.Sse.Url, Headers: headers(srv.Sse.Headers)}, srv.Sse.Name != ""
	}
	return "", mcp.ServerConfig{}, false
}

func headers(hs []acp.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}
