// Package mcp connects Tally to Model Context Protocol servers with the
// official Go SDK and offers their tools to the model as [tool.Tool]s.
//
// Configuration ([Config]) has the shape other MCP clients use,
// {"mcpServers": {"name": {"command": ..., "args": [...], "env": {...}}}}
// for a stdio server or {"url": ..., "headers": {...}} for streamable HTTP,
// read from the user's file ([UserPath]) and a workspace's .tally/mcp.json,
// which is used only when the user trusted its exact content and that of
// the workspace files its servers run ([LoadWorkspace], [TrustHash]),
// checked again before every start and restart. Every error names the
// file and server.
//
// A [Manager] runs the servers. The user's stdio servers start outside the
// workspace, which is also removed from their search paths (PATH,
// PYTHONPATH, NODE_PATH and the like); the workspace's own start in it.
// A stdio server gets only an allow-listed
// environment (PATH, HOME, locale and toolchain basics, never a variable
// that looks like a secret, such as OPENAI_API_KEY) plus what its
// configuration sets; its stderr goes to a size-capped log file. Each tool
// is named mcp__<server>__<tool> (function-name charset, at most 64 bytes,
// stable), with the server's description and an object input schema.
// Tools are handed out once each, sorted by name, with later servers only
// appending; past the token budget the model gets mcp_search instead, and
// the tools it finds are activated through Options.OnActivate.
//
// Servers of MCP's 2026-07-28 revision and of 2025-11-25 are served side
// by side: the SDK asks server/discover and speaks 2026-07-28 (no
// handshake, no session ID, version and capabilities on every request,
// list changes on subscriptions/listen, Mcp-Method, Mcp-Name and
// Mcp-Param-* headers) to a server that offers it, and falls back to the
// initialize handshake otherwise; [ServerStatus].Protocol says which. A
// tool list is listed again once its cache hint (ttlMs) ran out, at a
// request boundary, only ever appending; a tool whose x-mcp-header is
// invalid is left out and logged; input schemas keep every JSON Schema
// 2020-12 keyword.
//
// Calls never panic and never wait longer than the server's timeout
// (default 60 s): a server that fails to start, crashes, hangs or answers
// malformed data gives the model an error Result in one sentence, and its
// [ServerStatus] tells the UI. A crashed server is restarted once, on the
// next call. A call needs approval unless the server annotates the tool as
// read-only and the user allowed that server's read-only tools.
//
// A server may ask the user to fill in a form during a call (elicitation;
// an elicitation/create request in 2025-11-25, an input_required result
// in 2026-07-28, both the same form): its schema becomes a [Form],
// Options.Elicit asks the user, and the answers are checked and completed
// with the defaults of the fields left out before they reach the server;
// the call's timeout pauses meanwhile. A request to open a page (URL
// mode) reaches Options.Elicit as a Form with a URL ([Form.Page]), only
// for https pages or http on a loopback address. Without Options.Elicit
// every form and page is declined.
//
// The prompts and resources of the connected servers are listed for the
// prompt box ([Manager.Prompts], [Manager.Resources]; cached per
// connection for as long as a 2026-07-28 server's cache hints say, else
// for a short while), a prompt's messages are got as one text
// ([Manager.GetPrompt]) and a resource is read as text
// ([Manager.ReadResource]), binary parts as one-line placeholders and
// both capped in size; the caller redacts and neutralises what they give.
package mcp
