package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/tally-dev/tally/engine/command"
	"github.com/tally-dev/tally/engine/rewrite"
	"github.com/tally-dev/tally/engine/transcript"
	"github.com/tally-dev/tally/engine/workbench"
)

// replay sends the session's conversation (its current cycle, as the
// model sees it) as the updates a live turn would have sent: the user's
// messages, the replies and their reasoning, every tool call with its
// result and, for an edit, the change it asked for; then the checklist as
// the plan. It never waits for a running turn.
func (st *session) replay(ctx context.Context) {
	msgs := st.sess.Snapshot().Messages()
	results := make(map[string]transcript.Message)
	for _, m := range msgs {
		if m.Role == transcript.Tool {
			results[m.ToolCallID] = m
		}
	}
	for _, m := range msgs {
		if ctx.Err() != nil {
			return
		}
		if m.Kind != transcript.KindChat {
			continue // status blocks, reminders, seeds: the engine's, not the conversation's
		}
		switch m.Role {
		case transcript.User:
			if body := strings.TrimSpace(m.Body()); body != "" {
				st.send(withID(acp.UpdateUserMessageText(body), newMessageID()))
			}
		case transcript.Assistant:
			id := newMessageID()
			if m.Reasoning != "" {
				st.send(withID(acp.UpdateAgentThoughtText(m.Reasoning), id))
			}
			if t := m.Text(); t != "" {
				st.send(withID(acp.UpdateAgentMessageText(t), id))
			}
			for _, c := range m.ToolCalls {
				st.replayCall(c, results)
			}
		}
	}
	if list := st.sess.Snapshot().Checklist; len(list) > 0 {
		st.send(planUpdate(list))
	}
}

// replayCall sends one past tool call, finished as its result says.
func (st *session) replayCall(c transcript.ToolCall, results map[string]transcript.Message) {
	if hidden(c.Name) {
		return
	}
	ci := st.describe(c)
	ci.diff = st.argsDiff(c)
	res, ok := results[c.ID]
	if !ok {
		res = transcript.Message{Role: transcript.Tool, IsError: true,
			Blocks: []transcript.Block{{Type: transcript.BlockText, Text: "no result: the turn was interrupted before this call finished"}}}
	}
	st.send(acp.StartToolCall(acp.ToolCallId(c.ID), ci.title,
		acp.WithStartKind(ci.kind), acp.WithStartStatus(resultStatus(res)), acp.WithStartLocations(ci.locations),
		acp.WithStartRawInput(ci.input), acp.WithStartContent(resultContent(ci, res))))
}

// argsDiff is a past edit's change as its arguments state it: the
// replaced text and its replacement, or the whole content written. The
// file itself may have changed since.
func (st *session) argsDiff(c transcript.ToolCall) []acp.ToolCallContent {
	var p struct {
		Path      string  `json:"path"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
		Content   *string `json:"content"`
	}
	if json.Unmarshal([]byte(c.Arguments), &p) != nil || p.Path == "" {
		return nil
	}
	switch {
	case c.Name == "edit_file" && p.OldString != nil && p.NewString != nil:
		return []acp.ToolCallContent{acp.ToolDiffContent(st.abs(p.Path), *p.NewString, *p.OldString)}
	case c.Name == "write_file" && p.Content != nil:
		return []acp.ToolCallContent{acp.ToolDiffContent(st.abs(p.Path), *p.Content)}
	}
	return nil
}

// action performs a built-in command typed as the prompt (/compact,
// /new-cycle, /help, /model, /rewind) and answers in the conversation.
func (st *session) action(ctx context.Context, inv command.Invocation, perr error) (acp.PromptResponse, error) {
	if perr != nil {
		return acp.PromptResponse{}, &acp.RequestError{Code: codeInvalidParams, Message: perr.Error()}
	}
	say := func(s string) { st.send(acp.UpdateAgentMessageText(s)) }
	c := inv.Command
	switch c.Action {
	case command.ActionCompact, command.ActionNewCycle:
		if st.noModel != nil {
			return acp.PromptResponse{}, failure(st.noModel)
		}
	}
	switch c.Action {
	case command.ActionCompact:
		res, err := st.sess.Compaction().Apply(ctx)
		switch {
		case errors.Is(err, rewrite.ErrNothingToCompact):
			say(err.Error())
		case ctx.Err() != nil:
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		case err != nil:
			return acp.PromptResponse{}, failure(err)
		default:
			say(fmt.Sprintf("Compacted the conversation from %d to %d tokens.", res.TokensBefore, res.TokensAfter))
		}
	case command.ActionNewCycle:
		if err := st.sess.Compaction().NewCycle(ctx); err != nil {
			if ctx.Err() != nil {
				return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
			}
			return acp.PromptResponse{}, failure(err)
		}
		say("Started a new cycle from the hand-off brief and the checklist; the previous one is archived.")
	case command.ActionHelp:
		var b strings.Builder
		b.WriteString("Commands:\n")
		for _, cmd := range st.sess.Commands().List(ctx) {
			line := "/" + cmd.Name
			if cmd.Hint != "" {
				line += " " + cmd.Hint
			}
			if cmd.Description != "" {
				line += " — " + cmd.Description
			}
			b.WriteString("- `" + strings.ReplaceAll(line, "`", "'") + "`\n")
		}
		say(b.String())
	case command.ActionModel:
		if inv.Profile == "" && inv.Model == "" {
			say(fmt.Sprintf("This session talks to %s. Switch it with /model [@PROFILE] [NAME] (the profiles are in the app's Settings or `tally profile list`).", modelOn(st.sess.Snapshot().Meta.Model, st.sess.Snapshot().Meta.Profile)))
			break
		}
		wb, err := st.srv.workbench()
		if err != nil {
			return acp.PromptResponse{}, failure(err)
		}
		profile := inv.Profile
		if profile == "" {
			profile = cmp.Or(st.sess.Snapshot().Meta.Profile, workbench.MainProfile)
		}
		m, err := wb.ModelChoice(profile, inv.Model)
		if err == nil {
			err = st.sess.SwitchModel(m)
		}
		if err != nil {
			say("The model stays " + st.sess.Snapshot().Meta.Model + ": " + err.Error())
			break
		}
		st.noModel = nil // the session now has an endpoint of its own
		say(fmt.Sprintf("This session now talks to %s; its next request starts that model's cache afresh.", modelOn(m.ModelName, m.Profile)))
		st.send(st.configUpdate())
		st.sendUsage()
	default:
		say(fmt.Sprintf("/%s is not available from the editor; run `tally rewind %s --to TURN` in a terminal, or use the app's Rewind dialog.", c.Name, st.id))
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// modelOn names a model with the endpoint profile it is on.
func modelOn(model, profile string) string {
	if profile == "" {
		return model
	}
	return model + " (profile " + profile + ")"
}
