package tool

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tally-dev/tally/engine/diff"
)

// HunkApprover is an [Approver] that can accept part of a proposed file
// change. When the call under review is a write_file or edit_file whose
// diff is in [ApprovalRequest].Diff, the [Gate] asks ApproveHunks instead
// of Approve; accepted[i] says whether hunk i of the diff is to be written
// (a missing entry counts as rejected, nil accepts every hunk). The tool
// then writes exactly the accepted hunks and tells the model which ones
// the user rejected. An approver without this method approves whole calls.
type HunkApprover interface {
	Approver
	ApproveHunks(ctx context.Context, req ApprovalRequest) (Decision, []bool, error)
}

// proposal is the change a file tool would make: the file's content now
// (nil and existed false when it does not exist) and after the call.
type proposal struct {
	rel           string
	before, after []byte
	existed       bool
}

// proposer is implemented by the tools whose change can be shown as a
// diff before they run. propose computes the change without writing; its
// error is the reason the call would fail.
type proposer interface {
	propose(ctx context.Context, env *Env, args json.RawMessage) (proposal, error)
}

// diff returns the change p would make, as shown to the user.
func (p proposal) diff() diff.Diff { return diff.Compute(p.rel, p.before, p.after, p.existed) }

// hunkChoice is the user's partial approval of a proposed change, carried
// to the tool in its context: the diff, the accepted hunks and the hashes
// of the content the diff was computed from and to, so a file that changed
// in between is refused rather than patched blindly.
type hunkChoice struct {
	diff          diff.Diff
	accepted      []bool
	before, after [sha256.Size]byte
	existed       bool
}

type hunkChoiceKey struct{}

func withHunkChoice(ctx context.Context, c hunkChoice) context.Context {
	return context.WithValue(ctx, hunkChoiceKey{}, c)
}

func hunkChoiceFrom(ctx context.Context) (hunkChoice, bool) {
	c, ok := ctx.Value(hunkChoiceKey{}).(hunkChoice)
	return c, ok
}

// allAccepted reports whether accepted accepts every one of n hunks.
func allAccepted(accepted []bool, n int) bool {
	if accepted == nil {
		return true
	}
	for i := range n {
		if i >= len(accepted) || !accepted[i] {
			return false
		}
	}
	return true
}

// applyChoice narrows a tool's full change (before to after) to the hunks
// the user accepted, if the context carries a partial approval. It returns
// the content to write and the descriptions of the rejected hunks; when
// every hunk was rejected, or the file changed since it was reviewed, it
// returns a refusal.
func applyChoice(ctx context.Context, name string, before, after []byte, existed bool) ([]byte, []string, *Result) {
	c, ok := hunkChoiceFrom(ctx)
	if !ok {
		return after, nil, nil
	}
	if sha256.Sum256(before) != c.before || sha256.Sum256(after) != c.after || existed != c.existed {
		r := errorf(name, "%q changed after the user reviewed this change, so nothing was written; read the file again and repeat the call", c.diff.Path)
		return nil, nil, &r
	}
	rejected := c.diff.Rejected(c.accepted)
	if len(rejected) == len(c.diff.Hunks) {
		r := errorf(name, "the user rejected every hunk of this change to %q (%s), so nothing was written; do not redo these changes unless the user asks for them", c.diff.Path, strings.Join(rejected, "; "))
		return nil, nil, &r
	}
	out, err := diff.Apply(before, c.diff, c.accepted)
	if err != nil {
		r := errorf(name, "the hunks the user accepted could not be applied to %q (%v), so nothing was written; read the file again and repeat the call", c.diff.Path, err)
		return nil, nil, &r
	}
	return out, rejected, nil
}

// rejectedNote is the sentence a tool result adds when the user accepted
// only some hunks of the change to rel.
func rejectedNote(rel string, rejected []string) string {
	if len(rejected) == 0 {
		return ""
	}
	verb := "were"
	if len(rejected) == 1 {
		verb = "was"
	}
	return fmt.Sprintf("\nThe user accepted only part of this change to %s: %s %s not applied (hunks are numbered as in the diff of your whole change). Do not redo the rejected hunks unless the user asks; read the file to see what it holds now.",
		rel, strings.Join(rejected, "; "), verb)
}

// proposeFor computes the diff of a file tool's call for the approval
// card, or nil when the tool has none or the call would fail anyway.
func proposeFor(ctx context.Context, env *Env, t Tool, args string) (*proposal, *diff.Diff) {
	p, ok := t.(proposer)
	if !ok || env == nil {
		return nil, nil
	}
	pr, err := p.propose(ctx, env, json.RawMessage(args))
	if err != nil {
		return nil, nil
	}
	d := pr.diff()
	return &pr, &d
}

// choose asks a for the call in req, per hunk when a can and the change
// has hunks, and returns the decision with the partial approval to carry
// to the tool, if any.
func choose(ctx context.Context, a Approver, req ApprovalRequest, pr *proposal) (Decision, *hunkChoice, error) {
	ha, ok := a.(HunkApprover)
	if !ok || req.Diff == nil || pr == nil || len(req.Diff.Hunks) == 0 {
		d, err := a.Approve(ctx, req)
		return d, nil, err
	}
	d, accepted, err := ha.ApproveHunks(ctx, req)
	if err != nil || (d != Approve && d != ApproveAlways) || allAccepted(accepted, len(req.Diff.Hunks)) {
		return d, nil, err
	}
	return d, &hunkChoice{diff: *req.Diff, accepted: append([]bool(nil), accepted...),
		before: sha256.Sum256(pr.before), after: sha256.Sum256(pr.after), existed: pr.existed}, nil
}
