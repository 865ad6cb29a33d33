//go:build unix

package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/llm/llmtest"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/tool"
	"github.com/tally-dev/tally/internal/sandbox"
	"github.com/tally-dev/tally/internal/trust"
)

// The agent rewrote tools/mcp.sh, which a trusted workspace MCP file runs,
// crashed the server with a call, and the restart ran the new script
// outside the sandbox without asking: trust covered only mcp.json. Trust
// covers the script now, and is checked again before the restart.
func TestChangedWorkspaceMCPScriptAsksTrustAgain(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	var h *harness
	script := filepath.Join("tools", "mcp.sh")
	writeScript := func(body string) {
		t.Helper()
		p := filepath.Join(h.ws, script)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"exec '"+exe+"'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var echoResult string
	h = newHarness(t, llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		switch req.Step {
		case 0:
			return llmtest.Call("mcp__repo__crash", `{}`)
		case 1:
			// The agent's write_file, allowed inside the workspace.
			writeScript("echo ran > '" + marker + "'\n")
			return llmtest.Call("mcp__repo__echo", `{"text":"again"}`)
		case 2:
			echoResult = lastTool(req)
		}
		return llmtest.Text("done")
	}), tool.ApproveAll{})
	writeScript("")
	file := mcp.WorkspacePath(h.ws)
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{"mcpServers": {"repo": {"command": "sh", "args": ["`+script+`"], "env": {"`+mcpServerEnv+`": "1"}}}}`), 0o644)
	_, wf, err := mcp.LoadWorkspace(h.ws, nil)
	if err != nil || !wf.NeedsTrust {
		t.Fatalf("LoadWorkspace = %+v, %v", wf, err)
	}
	if err := trust.Put(h.st, trust.MCP, h.ws, wf.Hash); err != nil {
		t.Fatal(err)
	}

	s := h.mcpSession("trusted-script", nil)
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.srv.Requests()[0].Tools, "mcp__repo__echo") {
		t.Fatalf("the trusted server was not used: %v", h.srv.Requests()[0].Tools)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the restart ran the rewritten workspace script")
	}
	if !strings.Contains(echoResult, "was not started because") {
		t.Errorf("the call after the change = %q; want a refusal", echoResult)
	}
	st := s.MCP().Status()
	if !st.Workspace.NeedsTrust || st.Workspace.Hash == wf.Hash || st.Workspace.Hash == "" {
		t.Errorf("workspace file = %+v; want it to need trust again with the new hash", st.Workspace)
	}
	if p := st.Problems(); len(p) != 1 || p[0].State != mcp.StateUntrusted || !strings.Contains(p[0].Reason, "changed since it was trusted") {
		t.Errorf("problems = %+v; want the server marked untrusted", p)
	}
	var banner bool
	for _, e := range h.rec.kinds(EventMCP) {
		banner = banner || strings.Contains(e.Err, "changed since it was trusted")
	}
	if !banner {
		t.Error("no EventMCP error says the server was refused")
	}

	// A session opened after the change does not start it either.
	s2 := h.mcpSession("after-change", nil)
	if _, err := s2.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if !s2.MCP().Status().Workspace.NeedsTrust {
		t.Error("a session opened after the script changed did not ask for trust")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a new session ran the rewritten workspace script")
	}
}

// A trusted workspace MCP script sources a sibling file its command line
// does not name, so trust does not cover it; the agent rewrites that file
// and crashes the server, and the restart runs it. Workspace servers run
// in the command sandbox, so what it does stays inside the workspace.
func TestWorkspaceMCPSiblingFileEscapesOnRestart(t *testing.T) {
	if ok, why := sandbox.Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	var h *harness
	lib := filepath.Join("tools", "lib.sh")
	h = newHarness(t, llmtest.ScriptFunc(func(req *llmtest.Req) llmtest.Reply {
		switch req.Step {
		case 0:
			return llmtest.Call("mcp__repo__crash", `{}`)
		case 1:
			os.WriteFile(filepath.Join(h.ws, lib), []byte("echo ran > '"+marker+"'\n"), 0o644)
			return llmtest.Call("mcp__repo__echo", `{"text":"again"}`)
		}
		return llmtest.Text("done")
	}), tool.ApproveAll{})
	os.MkdirAll(filepath.Join(h.ws, "tools"), 0o755)
	os.WriteFile(filepath.Join(h.ws, lib), nil, 0o644)
	os.WriteFile(filepath.Join(h.ws, "tools", "mcp.sh"), []byte("#!/bin/sh\n. ./"+lib+"\nexec '"+exe+"'\n"), 0o755)
	file := mcp.WorkspacePath(h.ws)
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{"mcpServers": {"repo": {"command": "sh", "args": ["tools/mcp.sh"], "env": {"`+mcpServerEnv+`": "1"}}}}`), 0o644)
	_, wf, err := mcp.LoadWorkspace(h.ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := trust.Put(h.st, trust.MCP, h.ws, wf.Hash); err != nil {
		t.Fatal(err)
	}
	s := h.mcpSession("sibling", nil)
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.srv.Requests()[0].Tools, "mcp__repo__echo") {
		t.Fatalf("the trusted server did not start in the sandbox: %v", h.srv.Requests()[0].Tools)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the restarted workspace server wrote outside the workspace: %q", b)
	}
}
