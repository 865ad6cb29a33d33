package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/workbench"
	tw "github.com/tally-dev/tally/ui/widget"
)

// sessionsView lists the stored sessions, newest activity first, with New,
// Rename and Delete.
type sessionsView struct {
	u     *UI
	list  *widget.List
	box   fyne.CanvasObject
	items []workbench.SessionInfo
	sel   string
	quiet bool // selecting programmatically
	// rename, export and remove act on the selected session: off with
	// none.
	rename, export, remove *widget.Button
}

func newSessionsView(u *UI) *sessionsView {
	v := &sessionsView{u: u}
	v.list = widget.NewList(
		func() int { return len(v.items) },
		func() fyne.CanvasObject {
			t := &widget.Label{TextStyle: fyne.TextStyle{Bold: true}, Truncation: fyne.TextTruncateEllipsis}
			b := &widget.Label{TextStyle: fyne.TextStyle{Bold: true}}
			return container.NewVBox(container.NewBorder(nil, nil, nil, b, t), tw.StyledText("", theme.ColorNamePlaceHolder, false))
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			if id >= len(v.items) {
				return
			}
			s := v.items[id]
			box := o.(*fyne.Container)
			head := box.Objects[0].(*fyne.Container)
			head.Objects[0].(*widget.Label).SetText(listTitle(v.items, id))
			b := head.Objects[1].(*widget.Label)
			bd := v.u.badgeOf(s.ID)
			switch bd {
			case badgeNone:
				b.Hide()
			default:
				b.Importance = widget.SuccessImportance
				if bd == badgeWaiting {
					b.Importance = widget.WarningImportance
				}
				b.SetText("● " + bd)
				b.Show()
			}
			// The selected row's background is tinted: the detail uses the full foreground colour there to stay readable.
			tw.SetStyledTextSized(box.Objects[1].(*widget.RichText), sessionDetail(s, time.Now(), bd != badgeNone, v.items),
				detailColor(s.ID == v.sel), false, theme.SizeNameCaptionText)
		})
	v.list.OnSelected = func(id widget.ListItemID) {
		if id >= len(v.items) {
			return
		}
		v.sel = v.items[id].ID
		v.selectionButtons()
		v.list.Refresh()
		if !v.quiet {
			u.openSession(v.sel)
		}
	}
	newB := &widget.Button{Text: "New", Icon: theme.ContentAddIcon(), Importance: widget.HighImportance, OnTapped: v.showNew}
	v.rename = &widget.Button{Icon: theme.DocumentCreateIcon(), Importance: widget.LowImportance, OnTapped: v.showRename}
	v.remove = &widget.Button{Icon: theme.DeleteIcon(), Importance: widget.LowImportance, OnTapped: v.confirmDelete}
	v.export = &widget.Button{Icon: theme.DocumentSaveIcon(), Importance: widget.LowImportance, OnTapped: v.showExport}
	v.selectionButtons()
	head := container.NewBorder(nil, nil, widget.NewLabelWithStyle("Sessions", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewHBox(u.searchButton(), v.rename, v.export, v.remove))
	v.box = container.NewBorder(container.NewVBox(head, newB), nil, nil, nil, v.list)
	return v
}

// sessionDetail is the second line of a row: for a fork, first, where it comes from (its parent named by its
// title in list), then workspace, activity and cycle. A session that is running (or waiting for the user) is active now,
// whenever it last stored a message.
func sessionDetail(s workbench.SessionInfo, now time.Time, active bool, list []workbench.SessionInfo) string {
	ws := s.Workspace
	if home, err := os.UserHomeDir(); err == nil && strings.HasPrefix(ws, home) {
		ws = "~" + strings.TrimPrefix(ws, home)
	}
	when := tw.Ago(s.Updated, now)
	if active {
		when = "active now"
	}
	line := fmt.Sprintf("%s · %s · cycle %d", ws, when, max(s.Cycle, 1))
	if from := workbench.Lineage(s, list); from != "" {
		line = from + " · " + line // first: a long folder would cut it off
	}
	return line
}

// listTitle is the title row i of items shows: its own, or, when another
// listed session has the same one (two sessions started with the same
// prompt), when the session was created and then the title, so the rows
// can be told apart even where a long title is cut.
func listTitle(items []workbench.SessionInfo, i int) string {
	s := items[i]
	for j, o := range items {
		if j != i && o.Title == s.Title {
			return s.Created.Local().Format("Jan 2 15:04:05") + " · " + s.Title
		}
	}
	return s.Title
}

// detailColor is the colour of a row's second line: muted, except on the
// selected row, whose tinted background would swallow the muted colour.
func detailColor(selected bool) fyne.ThemeColorName {
	if selected {
		return theme.ColorNameForeground
	}
	return theme.ColorNamePlaceHolder
}

// refresh reloads the list off the UI goroutine.
func (v *sessionsView) refresh() { v.u.refreshSessions(false) }

// refreshSessions reloads the session list; on start it also restores the
// last open session.
func (u *UI) refreshSessions(restore bool) {
	wb := u.wb
	u.bridge.Work(func() func() {
		list, err := wb.Sessions()
		sort.SliceStable(list, func(i, j int) bool { return list[i].Updated.After(list[j].Updated) })
		return func() {
			if err != nil {
				u.banner.ShowError("Could not list the sessions: " + err.Error())
				return
			}
			u.sessions.set(list)
			if restore {
				last := u.settings.LastSession
				for _, s := range list {
					if s.ID == last {
						u.openSession(last)
						return
					}
				}
				if len(list) > 0 && last == "" {
					u.openSession(list[0].ID) // the most recent one
					return
				}
				u.showWelcome()
			}
		}
	})
}

func (v *sessionsView) set(list []workbench.SessionInfo) {
	v.items = list
	v.list.Refresh()
	v.selectID(v.sel)
}

// selectionButtons enables Rename and Delete while a listed session is
// selected.
func (v *sessionsView) selectionButtons() {
	_, ok := v.selected()
	enableIf(v.rename, ok)
	enableIf(v.export, ok)
	enableIf(v.remove, ok)
}

// selectID highlights the row of id without reopening it.
func (v *sessionsView) selectID(id string) {
	v.sel = id
	defer v.selectionButtons()
	for i, s := range v.items {
		if s.ID == id {
			v.quiet = true
			v.list.Select(i)
			v.quiet = false
			return
		}
	}
	v.list.UnselectAll()
}

// badges redraws the rows' running and waiting badges, and the fleet's.
func (v *sessionsView) badges() { v.list.Refresh(); v.u.fleet.Refresh() }

// title is session id's title as listed, or its ID before the list loads.
func (v *sessionsView) title(id string) string {
	for _, s := range v.items {
		if s.ID == id {
			return s.Title
		}
	}
	return id
}

func (v *sessionsView) selected() (workbench.SessionInfo, bool) {
	for _, s := range v.items {
		if s.ID == v.sel {
			return s, true
		}
	}
	return workbench.SessionInfo{}, false
}

// createSession creates a session off the UI goroutine and opens it.
func (u *UI) createSession(workspace, title string) {
	u.createSessionIn(workspace, title, false, "", nil)
}

// createSessionIn creates a session over workspace, with inWorktree in a
// git worktree of its own (see workbench.CreateSessionInWorktree), on
// endpoint profile ("" for the settings' default, workbench.MainProfile
// for the main connection), with the further folders roots (checked).
func (u *UI) createSessionIn(workspace, title string, inWorktree bool, profile string, roots []string) {
	workspace, problem := u.checkWorkspace(workspace)
	if problem != "" {
		u.banner.ShowError(problem)
		return
	}
	wb := u.wb
	u.bridge.Work(func() func() {
		// A new session starts in the mode chosen in Settings; one with no
		// endpoint yet can be created and opened all the same.
		cfg, err := wb.Config(workbench.SessionOptions{Profile: profile, Roots: roots})
		var sess *agent.Session
		if err == nil || errors.Is(err, workbench.ErrNoModel) {
			if inWorktree {
				sess, _, err = wb.CreateSessionInWorktree(context.Background(), cfg, workspace, strings.TrimSpace(title))
			} else {
				sess, err = wb.CreateSession(cfg, workspace, strings.TrimSpace(title))
			}
		}
		return func() {
			if err != nil {
				u.banner.ShowError("Could not create the session: " + err.Error())
				return
			}
			u.next.warmUp = sess.Snapshot().Meta.ID
			u.refreshSessions(false)
			u.openSession(sess.Snapshot().Meta.ID)
		}
	})
}

func (v *sessionsView) showRename() {
	s, ok := v.selected()
	if !ok {
		v.u.banner.ShowInfo("Select a session in the list first, then press Rename.")
		return
	}
	e := tw.NewEscEntry() // Escape cancels the rename, as elsewhere
	e.SetText(s.Title)
	var d *dialog.FormDialog
	e.OnSubmitted = func(string) { d.Submit() } // Enter renames
	d = dialog.NewForm("Rename session", "Rename", "Cancel", []*widget.FormItem{{Text: "Title", Widget: e}}, func(ok bool) {
		if !ok {
			return
		}
		wb, id, title := v.u.wb, s.ID, e.Text
		v.u.bridge.Work(func() func() {
			err := wb.Rename(id, title)
			return func() {
				if err != nil {
					v.u.banner.ShowError("Could not rename the session: " + err.Error())
					return
				}
				if v.u.live != nil && v.u.live.id == id {
					v.u.showTitle(strings.TrimSpace(title), v.u.live.info)
				}
				v.refresh()
			}
		})
	}, v.u.win)
	// Wide enough for a title of a few words; the form alone is narrow.
	d.Resize(fyne.NewSize(min(520, v.u.win.Canvas().Size().Width-40), d.MinSize().Height))
	d.Show()
	v.u.win.Canvas().Focus(e)
}

func (v *sessionsView) confirmDelete() {
	s, ok := v.selected()
	if !ok {
		v.u.banner.ShowInfo("Select a session in the list first, then press Delete.")
		return
	}
	u := v.u
	wb := u.wb
	u.bridge.Work(func() func() {
		t, inTree, _ := wb.Worktree(s.ID)
		return func() {
			msg := fmt.Sprintf("Delete %q and all of its messages? This cannot be undone. The workspace folder is not touched.", s.Title)
			if !inTree {
				d := dialog.NewConfirm("Delete session", msg, func(ok bool) {
					if ok {
						u.deleteSession(s.ID)
					}
				}, u.win)
				d.SetConfirmText("Delete")
				d.SetConfirmImportance(widget.DangerImportance) // it cannot be undone: not the blue default
				d.Show()
				return
			}
			u.confirmDeleteInWorktree(s.ID, s.Title, t)
		}
	})
}

// deleteSession removes a session's data; a running turn is stopped first.
func (u *UI) deleteSession(id string) { u.deleteSessionAnd(id, false) }

// deleteSessionAnd deletes session id, after removing its worktree and
// branch when removeTree is set: neither while a turn runs in it, and the
// session is closed first, so nothing works in the worktree as it goes.
func (u *UI) deleteSessionAnd(id string, removeTree bool) {
	if u.running(id) != nil {
		u.banner.ShowError("This session is running a turn; open it, press Stop, and try again.")
		return
	}
	if u.live != nil && u.live.id == id {
		u.closeSession(u.live.sess)
		u.live = nil
		u.showWelcome()
	}
	wb := u.wb
	u.bridge.Work(func() func() {
		if removeTree {
			if err := wb.RemoveWorktree(context.Background(), id, true); err != nil {
				return func() { u.banner.ShowError("Could not remove the worktree, so the session was kept: " + err.Error()) }
			}
		}
		err := wb.Delete(id)
		if errors.Is(err, workbench.ErrNotFound) {
			err = nil
		}
		return func() {
			if err != nil {
				u.banner.ShowError("Could not delete the session: " + err.Error())
			}
			u.sessions.sel = ""
			u.fleet.Forget(id)
			u.refreshSessions(false)
		}
	})
}

// pickerStart is where the folder picker opens: the folder typed in the
// field, or the nearest existing folder above it; nil leaves the picker
// at its default (the home folder).
func pickerStart(typed string) fyne.ListableURI {
	dir := expandHome(strings.TrimSpace(typed))
	if dir == "" || !filepath.IsAbs(dir) {
		return nil
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			if l, err := storage.ListerForURI(storage.NewFileURI(d)); err == nil {
				return l
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
