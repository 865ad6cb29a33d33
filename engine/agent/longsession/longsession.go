// Package longsession stores a long session for measuring the app with
// it: the UI's benchmarks and scripts/appmemory both seed theirs here, so
// they measure the same conversation.
package longsession

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/storage"
)

// Seed stores, in the data directory dir, a session of n messages in the
// workspace ws (which must exist and must not be dir): user prompts,
// Markdown answers with tool calls, and tool results, four messages a
// step. It returns the session's ID.
func Seed(dir, ws string, n int) (string, error) {
	st, err := storage.Open(filepath.Join(dir, "tally.db"), storage.Options{})
	if err != nil {
		return "", err
	}
	defer st.Close()
	sess, err := agent.Create(agent.Config{Store: st, ModelChoice: agent.ModelChoice{ModelName: "bench-model"}}, "bench", ws, "bench")
	if err != nil {
		return "", err
	}
	defer sess.Close()
	now := time.Now()
	var data [][]byte
	for i := 0; len(data) < n; i++ {
		call := transcript.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: fmt.Sprintf(`{"path":"pkg/file%d.go"}`, i)}
		for _, m := range []transcript.Message{
			transcript.UserText("<turn_meta>\n</turn_meta>", fmt.Sprintf("Step %d: look at file%d.go and explain what it does.", i, i), now),
			transcript.AssistantReply("Reading it.", "I should read the file.", []transcript.ToolCall{call}, now),
			transcript.ToolResult(call, fmt.Sprintf("package pkg\n\n// F%d does things.\nfunc F%d() int { return %d }\n", i, i, i), false, now),
			transcript.AssistantReply(fmt.Sprintf("## file%d.go\n\nIt defines **F%d**, which returns `%d`.\n\n- short\n- simple", i, i, i), "", nil, now),
		} {
			b, err := transcript.Encode(m)
			if err != nil {
				return "", err
			}
			data = append(data, b)
		}
	}
	err = st.Update(func(tx *storage.Tx) error {
		for _, b := range data[:n] {
			if _, err := tx.Append(sess.Snapshot().Meta.ID, 1, b); err != nil {
				return err
			}
		}
		return nil
	})
	return sess.Snapshot().Meta.ID, err
}
