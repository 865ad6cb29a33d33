// Package cycle implements checkpoint-restart: instead of summarising an
// ever older conversation in place, a session closes the current cycle,
// archives it verbatim, and opens a new one seeded with structured state
// and a hand-off brief the model wrote to its next self.
//
// The package is pure apart from the recall_archive tool, which reads
// archives through a function the caller supplies. It builds the brief
// request ([BriefRequest]), bounds the brief ([EnforceBrief]), renders the
// [CYCLE STATE] seed ([Seed], [Messages]) and searches closed cycles
// ([Search], [RecallTool]).
package cycle
