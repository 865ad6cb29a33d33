package tool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

//go:embed retrieve_tool_result.md
var retrieveDoc string

// RetrieveParams are the arguments of retrieve_tool_result.
type RetrieveParams struct {
	// SHA is the hex SHA-256 from a <TOOL_RESULT_REF sha="..."> reference,
	// or a handle such as #a1b2c3d4e5f6 (12 or more of its first digits)
	// from the index of what a compaction dropped.
	SHA string `json:"sha"`
	// Offset is the first line shown, 1-based; zero means 1.
	Offset int `json:"offset,omitempty"`
	// Limit is the number of lines shown; zero means 400.
	Limit int `json:"limit,omitempty"`
}

var retrieveSpec = Spec{
	Name:        "retrieve_tool_result",
	Description: strings.TrimSpace(retrieveDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"sha": {"type": "string", "description": "The sha attribute of the TOOL_RESULT_REF reference, or a handle like #a1b2c3d4e5f6 from the index of dropped messages."},
			"offset": {"type": "integer", "minimum": 1, "description": "First line to show, starting at 1. Default 1."},
			"limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Number of lines to show. Default 400."}
		},
		"required": ["sha"],
		"additionalProperties": false
	}`),
}

// shaRe matches a full SHA-256 or a handle's 12 or more leading digits.
var shaRe = regexp.MustCompile(`^[0-9a-f]{12,64}$`)

// BlobLoader returns the stored text of a tool result by its SHA-256 or by
// 12 or more of its leading hex digits (a handle without its "#").
type BlobLoader func(key string) ([]byte, error)

type retrieve struct{ load BlobLoader }

// RetrieveToolResult returns the retrieve_tool_result tool, which pages a
// deduplicated tool result back from the store by its SHA-256. It does not
// need approval.
func RetrieveToolResult(load BlobLoader) Tool { return retrieve{load} }

func (retrieve) Spec() Spec          { return retrieveSpec }
func (retrieve) NeedsApproval() bool { return false }

func (r retrieve) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "retrieve_tool_result"
	var p RetrieveParams
	if err := decodeParams(name, args, &p); err != nil {
		return errResult(name, err)
	}
	p.SHA = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(p.SHA)), "#")
	if !shaRe.MatchString(p.SHA) {
		return errorf(name, "sha %q is neither a hex SHA-256 nor a handle like #a1b2c3d4e5f6; copy it from the reference or the index of dropped messages", p.SHA)
	}
	if p.Offset < 0 || p.Limit < 0 {
		return errorf(name, "offset and limit must be positive")
	}
	if r.load == nil {
		return errorf(name, "no result store is available in this session")
	}
	data, err := r.load(p.SHA)
	if err != nil || data == nil {
		return errorf(name, "nothing stored has sha or handle %q; use one from a reference or the index of dropped messages in this conversation", p.SHA)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	off := max(p.Offset, 1)
	limit := p.Limit
	if limit == 0 {
		limit = ReadFileDefaultLimit
	}
	limit = min(limit, ReadFileMaxLimit)
	if off > len(lines) {
		return errorf(name, "offset %d is past the end: the result has %d lines", off, len(lines))
	}
	end := min(off-1+limit, len(lines))
	var b strings.Builder
	for i := off - 1; i < end; i++ {
		if b.Len() > readFileBudget {
			end = i
			break
		}
		fmt.Fprintf(&b, "%4d\t%s\n", i+1, lines[i])
	}
	if end < len(lines) {
		fmt.Fprintf(&b, "[lines %d-%d of %d; call again with offset %d for more]", off, end, len(lines), end+1)
	} else {
		fmt.Fprintf(&b, "[lines %d-%d of %d; end of result]", off, end, len(lines))
	}
	return Result{Content: b.String()}
}
