package prompt

import "fmt"

// Drift describes how one prefix differs from the previous one.
type Drift struct {
	Changed bool   `json:"changed"`
	Part    string `json:"part"`   // "system" or "tools"
	Name    string `json:"name"`   // the first section or tool that differs
	Offset  int    `json:"offset"` // first differing byte in the system text, or -1 for tools
	Booked  bool   `json:"booked"` // the engine announced this change (compaction, cycle)
	Reason  string `json:"reason,omitempty"`
}

// String is a one-line account of the drift for people.
func (d Drift) String() string {
	if !d.Changed {
		return "prefix unchanged"
	}
	kind := "unbooked"
	if d.Booked {
		kind = "booked (" + d.Reason + ")"
	}
	if d.Part == "tools" {
		return fmt.Sprintf("%s prefix change: tool %q changed", kind, d.Name)
	}
	return fmt.Sprintf("%s prefix change: section %q changed at byte %d of the system prompt", kind, d.Name, d.Offset)
}

// Diff compares two prefixes and names the first section or tool that
// drifted and the first differing byte of the system text.
func Diff(old, cur Fingerprint, oldText, curText string) Drift {
	if old.Combined == cur.Combined {
		return Drift{}
	}
	if old.System != cur.System {
		off := firstDiff(oldText, curText)
		name := ""
		for i, s := range cur.Sections {
			if i < len(old.Sections) && old.Sections[i] == s {
				continue
			}
			name = s.Name
			break
		}
		if name == "" && len(old.Sections) > len(cur.Sections) {
			name = old.Sections[len(cur.Sections)].Name
		}
		return Drift{Changed: true, Part: "system", Name: name, Offset: off}
	}
	for i, t := range cur.ToolList {
		if i >= len(old.ToolList) || old.ToolList[i].SHA != t.SHA || old.ToolList[i].Name != t.Name {
			return Drift{Changed: true, Part: "tools", Name: t.Name, Offset: -1}
		}
	}
	name := ""
	if len(old.ToolList) > len(cur.ToolList) {
		name = old.ToolList[len(cur.ToolList)].Name
	}
	return Drift{Changed: true, Part: "tools", Name: name, Offset: -1}
}

func firstDiff(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
