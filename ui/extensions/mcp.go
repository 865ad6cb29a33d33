package extensions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/internal/text"
	tw "github.com/tally-dev/tally/ui/widget"
)

// MCP servers: a line under the context gauge says how much of the
// window the servers' tool schemas take; Settings → MCP servers adds,
// removes, enables, disables and tests the user's servers.

// probeTimeout bounds the settings' Test of a server.
const probeTimeout = 30 * time.Second

// MCPLine is the gauge's MCP line for st; "" when no server is
// configured.
func MCPLine(st mcp.SessionStatus) string {
	if len(st.Servers) == 0 {
		return ""
	}
	up := 0
	for _, s := range st.Servers {
		if s.State == mcp.StateConnected {
			up++
		}
	}
	u := st.Usage
	line := fmt.Sprintf("MCP: %d of %s connected · %s in the catalog (%s tokens)", up, text.Plural(len(st.Servers), "server"),
		text.Plural(u.Handed, "tool"), tw.TokensShort(u.Exposed))
	if u.Handed == 0 && u.Tools > 0 && !u.Search {
		// Connected since the last request: the next one sends them.
		line = fmt.Sprintf("MCP: %d of %s connected · %s, in the catalog from the next request", up, text.Plural(len(st.Servers), "server"),
			text.Plural(u.Tools, "tool"))
	}
	if u.Search {
		line += fmt.Sprintf(" · %d more behind mcp_search (%s tokens if all were sent)", u.Tools-u.Handed, tw.TokensShort(u.All))
	}
	return line
}

// MCP is what the MCP views get of the session shown.
type MCP struct {
	// Shown returns the session shown and its folder; nil and "" when
	// none is.
	Shown func() (*agent.Session, string)
	// Servers lists the configured servers with sess's live states; it
	// runs off the UI goroutine.
	Servers func(ws string, sess *agent.Session) ([]workbench.MCPServer, error)
}

// MCPServers is the MCP servers dialog.
type MCPServers struct {
	widget.BaseWidget

	h       Host
	m       MCP
	list    *fyne.Container
	servers []workbench.MCPServer
	name    *tw.EscEntry
	command *tw.EscEntry
	status  *widget.Label
	probed  []mcp.ToolSummary // the last Test's tools, for tests
	failed  map[string]string // why each server's last Test failed, by name
	passed  map[string]string // what each server's last Test found, by name: "reachable · 2 tools"
	body    fyne.CanvasObject
	dlg     *dialog.CustomDialog
}

// CreateRenderer implements fyne.Widget.
func (v *MCPServers) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(v.body) }

// ShowMCPServers opens the MCP servers dialog.
func ShowMCPServers(h Host, m MCP) *MCPServers {
	v := &MCPServers{h: h, m: m, list: container.NewVBox()}
	v.name = tw.NewEscEntry()
	v.name.SetPlaceHolder("name, e.g. github")
	v.command = tw.NewEscEntry()
	v.command.SetPlaceHolder("a command (npx -y @org/server) or an https:// URL")
	v.status = &widget.Label{Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance}
	add := &widget.Button{Text: "Add", Icon: theme.ContentAddIcon(), OnTapped: v.add}
	form := container.NewBorder(nil, nil, nil, add, container.NewGridWithColumns(2, v.name, v.command))
	path, _ := workbench.MCPUserPath()
	head := &widget.Label{Wrapping: fyne.TextWrapWord, Text: "Servers from " + path + " (yours) and from the workspace's .tally/mcp.json " +
		"(only once trusted). Their tools are named mcp__server__tool and ask before each call unless you allow them. Changes apply to sessions opened from now on."}
	v.body = container.NewBorder(head, container.NewVBox(widget.NewSeparator(), form, v.status), nil, nil, container.NewVScroll(v.list))
	v.ExtendBaseWidget(v)
	win := h.Window
	v.dlg = dialog.NewCustom("MCP servers", "Close", v, win)
	v.dlg.Resize(fyne.NewSize(min(900, win.Canvas().Size().Width-40), min(600, win.Canvas().Size().Height-40)))
	v.reload()
	v.dlg.Show()
	return v
}

// reload lists the servers again (with the shown session's live states).
func (v *MCPServers) reload() {
	sess, ws := v.m.Shown()
	list := v.m.Servers
	v.h.Work(func() func() {
		servers, err := list(ws, sess)
		return func() {
			if err != nil {
				v.status.SetText("Could not read the MCP configuration: " + err.Error())
			}
			v.servers = servers
			v.list.Objects = nil
			if len(servers) == 0 {
				v.list.Add(widget.NewLabel("No MCP server is configured. Add one below."))
			}
			for _, s := range servers {
				v.list.Add(v.row(s))
			}
			v.list.Refresh()
		}
	})
}

// row is one server in the dialog.
func (v *MCPServers) row(s workbench.MCPServer) fyne.CanvasObject {
	what := s.Config.Command + " " + strings.Join(s.Config.Args, " ")
	if s.Config.URL != "" {
		what = s.Config.URL
	}
	state := string(s.Status.State)
	if s.Status.State == mcp.StateSignIn {
		state = "Sign in needed"
	} else if s.SignedIn {
		state += " · signed in"
	}
	failed, hasFailed := v.failed[s.Name]
	passed, hasPassed := v.passed[s.Name]
	if hasFailed {
		state = "test failed: " + failed
	} else if hasPassed && s.Status.State != mcp.StateConnected {
		// The shown session does not run it (idle, stopped, failed
		// before): the Test's answer is the news.
		state = passed
	} else if s.Status.Reason != "" {
		state += ": " + s.Status.Reason
	} else if s.Status.Tools > 0 {
		state += fmt.Sprintf(" · %s", text.Plural(s.Status.Tools, "tool"))
	}
	source := "yours"
	if s.Source == workbench.MCPSourceWorkspace {
		source = "workspace, not trusted"
		if s.Trusted {
			source = "workspace, trusted"
		}
		if s.Shadowed {
			source += ", replaced by yours"
		}
	}
	title := &widget.Label{Text: s.Name + "  (" + source + ")", TextStyle: fyne.TextStyle{Bold: true}}
	detail := &widget.Label{Text: strings.TrimSpace(what) + "\n" + state, Wrapping: fyne.TextWrapWord, Importance: widget.LowImportance}
	if hasFailed {
		detail.Importance = widget.DangerImportance
	}
	name, sc := s.Name, s.Config
	test := &widget.Button{Text: "Test", Icon: theme.MediaPlayIcon(), OnTapped: func() { v.test(name, sc) }}
	buttons := container.NewHBox(test)
	if sc.Kind() != mcp.TypeStdio {
		buttons.Objects = append(v.signInButtons(s), buttons.Objects...)
	}
	if s.Source == workbench.MCPSourceUser {
		on := widget.NewCheck("Enabled", nil)
		on.Checked = !s.Config.Disabled
		on.OnChanged = func(enabled bool) { v.change(func() error { return workbench.EnableMCPServer(name, enabled) }) }
		remove := &widget.Button{Text: "Remove", Icon: theme.DeleteIcon(), Importance: widget.LowImportance, OnTapped: func() {
			v.change(func() error { return workbench.RemoveMCPServer(name) })
		}}
		buttons.Objects = append([]fyne.CanvasObject{on}, append(buttons.Objects, remove)...)
	}
	return container.NewVBox(container.NewBorder(nil, nil, nil, buttons, title), detail, widget.NewSeparator())
}

// change applies an edit of the user's MCP file and lists the servers again.
func (v *MCPServers) change(edit func() error) {
	if err := edit(); err != nil {
		v.status.SetText(err.Error())
		return
	}
	v.status.SetText("Saved. Sessions opened from now on use it.")
	v.reload()
}

// add saves the server typed in the form: a URL is an HTTP server, any
// other text a command with its arguments.
func (v *MCPServers) add() {
	name, cmd := strings.TrimSpace(v.name.Text), strings.TrimSpace(v.command.Text)
	if cmd == "" {
		v.status.SetText("Type the server's command or URL next to its name.")
		return
	}
	var sc mcp.ServerConfig
	if strings.HasPrefix(cmd, "http://") || strings.HasPrefix(cmd, "https://") {
		sc.URL = cmd
	} else {
		f := strings.Fields(cmd)
		sc.Command, sc.Args = f[0], f[1:]
	}
	v.change(func() error { return workbench.SaveMCPServer(name, sc) })
	if v.status.Text == "Saved. Sessions opened from now on use it." {
		v.name.SetText("")
		v.command.SetText("")
	}
}

// test connects to a server off the UI goroutine and lists its tools.
func (v *MCPServers) test(name string, sc mcp.ServerConfig) {
	_, ws := v.m.Shown()
	v.setStatus("Connecting to "+name+"…", false)
	v.h.Work(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		tools, err := workbench.ProbeMCP(ctx, name, sc, ws)
		return func() {
			if v.failed == nil {
				v.failed, v.passed = map[string]string{}, map[string]string{}
			}
			if err != nil {
				why := probeFailure(err)
				v.failed[name] = why
				delete(v.passed, name)
				v.setStatus("The test of "+name+" failed: "+why, true)
				v.reload()
				return
			}
			delete(v.failed, name)
			v.status.Importance = widget.LowImportance
			v.probed = tools
			total := 0
			var lines []string
			for _, t := range tools {
				total += t.Tokens
				lines = append(lines, fmt.Sprintf("%s — %s", t.RemoteName, text.FirstLine(t.Description, 90)))
			}
			v.passed[name] = fmt.Sprintf("reachable · %s (tested)", text.Plural(len(tools), "tool"))
			v.reload() // the row says what the test found
			v.status.SetText(fmt.Sprintf("%s answers with %s (%s tokens of schemas):\n%s", name, text.Plural(len(tools), "tool"),
				tw.TokensShort(total), strings.Join(lines, "\n")))
		}
	})
}

// setStatus shows msg under the form, in the error colour when bad.
func (v *MCPServers) setStatus(msg string, bad bool) {
	v.status.Importance = widget.LowImportance
	if bad {
		v.status.Importance = widget.DangerImportance
	}
	v.status.SetText(msg)
}

// probeFailure says in words why a server's test failed; the error's own
// text follows in brackets for the details.
func probeFailure(err error) string {
	msg := err.Error()
	low := strings.ToLower(msg)
	var why string
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		why = fmt.Sprintf("it did not answer within %d s", int(probeTimeout.Seconds()))
	case strings.Contains(low, "executable file not found") || strings.Contains(low, "no such file"):
		why = "its command was not found; check the command and that it is installed"
	case strings.Contains(low, "broken pipe") || strings.Contains(low, "closing") || strings.Contains(low, "eof") || strings.Contains(low, "exit"):
		why = "the server stopped before it answered; it may have crashed at start (run its command in a terminal to see why)"
	case strings.Contains(low, "connection refused"):
		why = "nothing listens at that address"
	default:
		return strings.TrimSuffix(msg, ".") + "."
	}
	return why + ". (" + text.OneLine(msg, 160) + ")"
}
