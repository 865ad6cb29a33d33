package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tally-dev/tally/engine/diff"
	"github.com/tally-dev/tally/engine/tool"
)

// On a terminal, [p]ick asks about each change of an edit and answers with
// exactly the accepted ones; accepting none denies the call.
func TestTerminalPicksChanges(t *testing.T) {
	var before, after strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&before, "line %d\n", i)
		switch i {
		case 3, 20, 37:
			fmt.Fprintf(&after, "changed %d\n", i)
		default:
			fmt.Fprintf(&after, "line %d\n", i)
		}
	}
	d := diff.Compute("f.txt", []byte(before.String()), []byte(after.String()), true)
	if len(d.Hunks) != 3 {
		t.Fatalf("%d hunks", len(d.Hunks))
	}
	req := tool.ApprovalRequest{Tool: "write_file", Summary: "write_file f.txt", Display: "write_file f.txt", Diff: &d}
	var out strings.Builder
	a := &terminalApprover{in: bufio.NewReader(strings.NewReader("p\ny\nn\ny\n")), out: &out}
	dec, accepted, err := a.ApproveHunks(context.Background(), req)
	if err != nil || dec != tool.Approve || fmt.Sprint(accepted) != "[true false true]" {
		t.Errorf("pick: %v %v %v", dec, accepted, err)
	}
	if !strings.Contains(out.String(), "[p]ick changes") || !strings.Contains(out.String(), "apply hunk 2 of 3") {
		t.Errorf("the terminal showed:\n%s", out.String())
	}
	a = &terminalApprover{in: bufio.NewReader(strings.NewReader("p\nn\nn\nn\n")), out: &out}
	if dec, _, _ := a.ApproveHunks(context.Background(), req); dec != tool.Deny {
		t.Errorf("accepting no change gave %v", dec)
	}
}
