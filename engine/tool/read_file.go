package tool

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tally-dev/tally/engine/images"
	"github.com/tally-dev/tally/internal/text"
)

//go:embed read_file.md
var readFileDoc string

// ReadFileParams are the arguments of read_file.
type ReadFileParams struct {
	// Path is the file to read, relative to the workspace root.
	Path string `json:"path"`
	// Offset is the first line shown, 1-based; zero means 1.
	Offset int `json:"offset,omitempty"`
	// Limit is the number of lines shown; zero means 400, and values above
	// 2000 are lowered to 2000.
	Limit int `json:"limit,omitempty"`
}

// Limits of read_file.
const (
	ReadFileDefaultLimit = 400
	ReadFileMaxLimit     = 2000
	// ReadFileMaxLineLen is the number of bytes of a line shown before it
	// is cut with a marker.
	ReadFileMaxLineLen = 2000
)

// readFileBudget bounds the bytes of numbered lines in one page, so a page
// fits in IntakeLimit with its footer instead of being cut in the middle.
const readFileBudget = IntakeLimit - 400

var readFileSpec = Spec{
	Name:        "read_file",
	Description: strings.TrimSpace(readFileDoc),
	Parameters: schema(`{
		"type": "object",
		"properties": {
			"path": {"type": "string", "description": "File path relative to the workspace root."},
			"offset": {"type": "integer", "minimum": 1, "description": "First line to show, starting at 1. Default 1."},
			"limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Number of lines to show. Default 400."}
		},
		"required": ["path"],
		"additionalProperties": false
	}`),
}

type readFile struct{}

// ReadFile returns the read_file tool: it shows a page of numbered lines of
// a text file in the workspace, with a footer saying how to get the next
// page. It does not need approval.
func ReadFile() Tool { return readFile{} }

func (readFile) Spec() Spec          { return readFileSpec }
func (readFile) NeedsApproval() bool { return false }

func (readFile) Run(ctx context.Context, env *Env, args json.RawMessage) Result {
	const name = "read_file"
	var p ReadFileParams
	if err := decodeParams(name, args, &p); err != nil {
		return errResult(name, err)
	}
	if p.Path == "" {
		return errorf(name, "path is missing; pass the file path relative to the workspace root")
	}
	if p.Offset < 0 {
		return errorf(name, "offset %d is negative; pass a line number starting at 1", p.Offset)
	}
	if p.Limit < 0 {
		return errorf(name, "limit %d is negative; pass a number of lines between 1 and %d", p.Limit, ReadFileMaxLimit)
	}
	offset, limit := p.Offset, p.Limit
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = ReadFileDefaultLimit
	}
	limit = min(limit, ReadFileMaxLimit)

	w, err := openWorkspace(env, p.Path)
	if err != nil {
		return errResult(name, err)
	}
	defer w.Close()
	rel, fname, err := w.confine(p.Path)
	if err != nil {
		return errResult(name, err)
	}
	fi, used, err := w.stat(fname)
	if err != nil {
		return errorf(name, "%s", describeStatError(rel, err))
	}
	if fi.IsDir() {
		return errorf(name, "%q is a directory; use list_dir to see its entries", rel)
	}
	if !fi.Mode().IsRegular() {
		return errorf(name, "%q is not a regular file; read a regular file instead", rel)
	}
	if what, secret := w.secretPath(env, rel, fname); secret && !secretReadAllowed(ctx) {
		return refuseSecret(name, what, "read", "read")
	}
	f, fi, err := w.openRegular(used, fi)
	if err != nil {
		return errorf(name, "%s", describeStatError(rel, err))
	}
	defer f.Close()

	res := Result{Paths: []string{rel}}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(sniffLen)
	if mt := images.Sniff(head); mt != "" {
		return readImage(env, rel, mt, fi.Size(), br, res)
	}
	if looksBinary(head, len(head) < sniffLen) {
		res.Content = fmt.Sprintf("%s: binary file, %s; not shown", rel, text.Plural(int(fi.Size()), "byte"))
		return res
	}

	if txt, ok := env.editorText(ctx, rel); ok {
		br = bufio.NewReader(strings.NewReader(txt)) // what the user sees in the editor
	}
	page, total, err := readLines(ctx, br, offset, limit, &res)
	if err != nil {
		return errorf(name, "reading %q failed (%v); try again or read a different file", rel, unwrapPathError(err))
	}
	if total == 0 {
		res.Content = fmt.Sprintf("%s: empty file, 0 bytes", rel)
		return res
	}
	if offset > total {
		return errorf(name, "offset %d is past the end of %q, which has %s lines; pass an offset between 1 and %d", offset, rel, text.Thousands(total), total)
	}
	last := offset + len(page) - 1
	width := max(4, len(strconv.Itoa(last)))
	var b strings.Builder
	for i, line := range page {
		fmt.Fprintf(&b, "%*d\t%s\n", width, offset+i, line)
	}
	if last < total {
		fmt.Fprintf(&b, "[lines %s-%s of %s; call again with offset %d for more]", text.Thousands(offset), text.Thousands(last), text.Thousands(total), last+1)
	} else {
		fmt.Fprintf(&b, "[lines %s-%s of %s; end of file]", text.Thousands(offset), text.Thousands(last), text.Thousands(total))
	}
	res.Content = b.String()
	return res
}

// readLines returns up to limit lines starting at line offset (1-based),
// stopping early once the page reaches readFileBudget bytes, and the total
// number of lines in r. Lines are cut at ReadFileMaxLineLen bytes with a
// marker, after the secrets in them are redacted (counted in res), and
// invalid UTF-8 is replaced.
func readLines(ctx context.Context, r *bufio.Reader, offset, limit int, res *Result) (page []string, total int, err error) {
	var (
		cur     []byte // kept prefix of the current line
		curLen  int    // full length of the current line
		inLine  bool
		size    int // bytes in page so far
		full    bool
		lineNum int
	)
	finish := func() {
		lineNum++
		if lineNum >= offset && !full && len(page) < limit {
			s := strings.TrimSuffix(string(cur), "\r")
			s = strings.ToValidUTF8(s, "\uFFFD")
			if curLen > ReadFileMaxLineLen {
				s = cutHead(res.redact(s), ReadFileMaxLineLen)
				s += fmt.Sprintf(" [... line cut: %s bytes in total]", text.Thousands(curLen))
			}
			// Each line costs its text plus the number, tab and newline.
			if cost := len(s) + max(4, len(strconv.Itoa(lineNum))) + 2; len(page) > 0 && size+cost > readFileBudget {
				full = true
			} else {
				page = append(page, s)
				size += cost
			}
		}
		cur, curLen, inLine = cur[:0], 0, false
	}
	for {
		if lineNum%4096 == 0 && ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		chunk, rerr := r.ReadSlice('\n')
		if len(chunk) > 0 {
			inLine = true
			body := chunk
			ended := body[len(body)-1] == '\n'
			if ended {
				body = body[:len(body)-1]
			}
			curLen += len(body)
			// Keep more than the cap, so that a secret straddling the cut
			// can be redacted whole before the line is cut.
			if keep := ReadFileMaxLineLen + secretSlack - len(cur); keep > 0 {
				cur = append(cur, body[:min(keep, len(body))]...)
			}
			if ended {
				finish()
			}
		}
		switch {
		case rerr == nil, errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case errors.Is(rerr, io.EOF):
			if inLine {
				finish()
			}
			return page, lineNum, nil
		default:
			return nil, 0, rerr
		}
	}
}
