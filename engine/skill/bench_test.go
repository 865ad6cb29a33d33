package skill

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tally-dev/tally/internal/trust"
)

// BenchmarkRefresh is what a turn start costs the skills (the agent calls
// Session.Refresh as each turn starts, with Discover behind it): n trusted
// workspace skills and n of the user's, none changed since the last turn.
func BenchmarkRefresh(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			user, ws := b.TempDir(), b.TempDir()
			body := strings.Repeat("Follow these steps carefully.\n", 60)
			for i := range n {
				write(b, user, fmt.Sprintf("skills/mine-%d/SKILL.md", i), fmt.Sprintf("---\nname: mine-%d\ndescription: One of the user's skills.\n---\n%s", i, body))
				write(b, ws, fmt.Sprintf(".tally/skills/ws-%d/SKILL.md", i), fmt.Sprintf("---\nname: ws-%d\ndescription: One of the workspace's skills.\n---\n%s", i, body))
			}
			trusted := Discover(user, ws, "").WorkspaceHash
			k := NewSession(nil, func() Catalog { return Discover(user, ws, trusted) })
			time.Sleep(trust.Settle + 100*time.Millisecond) // files this fresh are stamped too close to their change to be relied on
			for b.Loop() {
				k.Refresh()
			}
			if got := len(k.catalog().Skills); got != 2*n {
				b.Fatalf("%d skills offered; want %d", got, 2*n)
			}
		})
	}
}
