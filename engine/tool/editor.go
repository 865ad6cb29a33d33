package tool

import "context"

// Editor is the editor a session is driven from (an ACP client), when it
// offers its buffers. read_file and edit_file take a text file's content
// from it, so they see what the user sees, unsaved changes included;
// write_file and edit_file hand it the content they wrote, so its buffer
// shows the change. Every path has passed the tools' checks (confined to
// the workspace, not a secret file, a regular text file on disk) before
// the editor is asked; whatever the editor cannot answer is read from
// disk as without one.
type Editor interface {
	// ReadText returns the editor's text of the file at abs, or false
	// to read it from disk.
	ReadText(ctx context.Context, abs string) (string, bool)
	// WroteText tells the editor the file at abs now holds text.
	WroteText(ctx context.Context, abs, text string)
}

// editorText is the editor's text of file rel (as the tools show it), when there is an
// editor that has it.
func (e *Env) editorText(ctx context.Context, rel string) (string, bool) {
	if e == nil || e.Editor == nil {
		return "", false
	}
	return e.Editor.ReadText(ctx, e.abs(rel))
}

// toEditor hands the editor, when there is one, the content written to
// workspace file rel.
func (e *Env) toEditor(ctx context.Context, rel string, content []byte) {
	if e == nil || e.Editor == nil {
		return
	}
	e.Editor.WroteText(ctx, e.abs(rel), string(content))
}
