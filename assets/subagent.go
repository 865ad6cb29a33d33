package assets

import _ "embed"

// SubagentExplore is the system prompt of an "explore" sub-agent: a
// read-only child that investigates and reports. Every explore child of
// every session starts with these bytes, so they share a cached prefix.
//
//go:embed subagent_explore.md
var SubagentExplore string

// SubagentGeneral is the system prompt of a "general" sub-agent, which may
// also edit files and run commands when the parent session allows it.
//
//go:embed subagent_general.md
var SubagentGeneral string
