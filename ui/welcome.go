package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/demo"
	"github.com/tally-dev/tally/engine/workbench"
)

// welcomeView is shown when no session is open. Without a configured
// endpoint it offers Connect a model and Try the demo.
func (u *UI) welcomeView() fyne.CanvasObject {
	icon := canvas.NewImageFromResource(u.app.Icon())
	icon.FillMode = canvas.ImageFillContain
	icon.SetMinSize(fyne.NewSize(72, 72))
	head := widget.NewLabelWithStyle("Welcome to Tally", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	text := &widget.Label{Wrapping: fyne.TextWrapWord, Alignment: fyne.TextAlignCenter}
	connect := &widget.Button{Text: "Connect a model", Icon: theme.SettingsIcon(), OnTapped: u.showSettings}
	try := &widget.Button{Text: "Try the demo", Icon: theme.MediaPlayIcon(), OnTapped: u.startDemo}
	newB := &widget.Button{Text: "New session", Icon: theme.ContentAddIcon(), Importance: widget.HighImportance,
		OnTapped: func() { u.sessions.showNew() }}
	var buttons *fyne.Container
	if u.configured() {
		text.SetText(fmt.Sprintf("Connected to %s (model %s). Start a session in a project folder, or open one on the left.",
			u.resolved().BaseURL, u.resolved().Model))
		buttons = container.NewHBox(newB, connect, try)
	} else {
		connect.Importance = widget.HighImportance
		text.SetText("Tally runs coding agents against any OpenAI-compatible model. Connect one with its base URL and key, " +
			"or try the demo: a scripted model fixes a bug in a sample project, with no API key and no network.")
		buttons = container.NewHBox(connect, try)
	}
	box := container.NewVBox(container.NewCenter(icon), head, text, container.NewCenter(buttons))
	return container.NewCenter(container.NewGridWrap(fyne.NewSize(560, 260), box))
}

// startDemo writes the sample project, starts the scripted model on
// loopback and runs a real session against it.
func (u *UI) startDemo() {
	if u.wb == nil {
		return
	}
	wb := u.wb
	base := filepath.Dir(wb.Path())
	u.bridge.Work(func() func() {
		dir := filepath.Join(base, "demo", time.Now().Format("20060102-150405"))
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = demo.NewWorkspace(dir)
		}
		var id string
		if err == nil {
			var sess *agent.Session
			var cfg agent.Config
			if cfg, err = wb.Config(workbench.SessionOptions{Demo: true}); err == nil {
				sess, err = wb.CreateSession(cfg, dir, "Demo: fix calc.Add")
			}
			if sess != nil {
				id = sess.Snapshot().Meta.ID
			}
		}
		return func() {
			if err != nil {
				u.banner.ShowError("Could not start the demo: " + err.Error())
				return
			}
			u.refreshSessions(false)
			u.openSession(id)
			u.next.autoSend = demo.Prompt
		}
	})
}
