package lsp

// LogLimit caps a server's log file, in bytes: when it would grow past
// it, it is moved to "<name>.log.1" (replacing an older one) and a new
// file is started, so at most twice the limit is kept per server. The
// log itself is internal/serverlog's, as for MCP servers: stderr line by
// line with secrets redacted, the last line kept for status reasons.
const LogLimit = 2 << 20
