package ui

import (
	"net/url"
	"strings"

	"github.com/tally-dev/tally/engine/agent"
	"github.com/tally-dev/tally/engine/mcp"
	"github.com/tally-dev/tally/ui/extensions"
	tw "github.com/tally-dev/tally/ui/widget"
)

// MCP servers in the app: a line under the context gauge says how much of
// the window the servers' tool schemas take; a failing server raises a
// banner that opens its log; a workspace that ships .tally/mcp.json asks
// for trust, showing what it would run; Settings → MCP servers adds,
// removes, enables, disables and tests the user's servers (package
// ui/extensions draws them).

// showMCP refreshes the gauge's MCP line and, once per problem, the banner
// of a failed server or an untrusted workspace file.
func (u *UI) showMCP(live *liveSession, st mcp.SessionStatus, event string) {
	if u.live != live {
		return
	}
	u.showMCPLine(st)
	probs, signIns := st.Problems(), st.SignIns()
	signInEvent := len(signIns) > 0 && (event == "" || strings.Contains(event, "needs you to sign in"))
	switch {
	case signInEvent:
		name := signIns[0].Name
		u.banner.ShowAction("The MCP server "+name+" needs you to sign in; its tools are not offered until then.", "Sign in", func() { u.signInFromBanner(live, name) })
	case event != "" && len(probs) > 0:
		logPath := probs[0].LogPath
		u.banner.ShowAction(tw.UpperFirst(event), "Open log", func() { u.openFile(logPath) })
	case event != "":
		u.banner.ShowError(tw.UpperFirst(event))
	case st.Workspace.NeedsTrust:
		wf := st.Workspace
		u.banner.ShowAction("This workspace ships MCP servers (.tally/mcp.json) that are not trusted yet, so they were not started.",
			"Review…", func() { u.reviewMCPTrust(live, wf) })
	}
}

// showMCPLine writes the gauge's MCP line for st. It is written again
// after every request: a server's tools reach the catalog at the request
// after it connected, and the line counts what the catalog sends.
func (u *UI) showMCPLine(st mcp.SessionStatus) {
	u.side.mcpInfo.SetText(extensions.MCPLine(st))
	tw.ShowIf(u.side.mcpInfo, u.side.mcpInfo.Text != "")
}

// openFile opens a local file with the desktop's viewer.
func (u *UI) openFile(path string) {
	if path == "" {
		u.banner.ShowInfo("This server has no log yet.")
		return
	}
	if err := u.app.OpenURL(&url.URL{Scheme: "file", Path: path}); err != nil {
		u.banner.ShowError("Could not open " + path + ": " + err.Error())
	}
}

// reviewMCPTrust shows what a workspace's MCP file would start and trusts
// it on request; the session then restarts its servers.
func (u *UI) reviewMCPTrust(live *liveSession, wf mcp.WorkspaceFile) {
	wb, ws := u.wb, live.info.workspace
	extensions.ReviewMCP(u.extensionHost(), wf, func() error { return wb.TrustMCP(ws, wf.Hash) }, func() { u.restartSession(live) })
}

// restartSession reopens the shown session from the store, so that it
// reads its configuration (MCP servers) again.
func (u *UI) restartSession(live *liveSession) {
	if u.live != live || live.job.running {
		return
	}
	u.closeSession(live.sess)
	u.live = nil
	u.openSession(live.id)
}

// showMCPSettings opens the MCP servers dialog.
func (u *UI) showMCPSettings() {
	extensions.ShowMCPServers(u.extensionHost(), extensions.MCP{Shown: u.shownSession, Servers: u.wb.MCPServers})
}

// extensionHost is what the MCP, hooks and trust views get of the window.
func (u *UI) extensionHost() extensions.Host {
	return extensions.Host{Window: u.win, Work: u.bridge.Work, Do: u.bridge.Do,
		Info: u.banner.ShowInfo, Error: u.banner.ShowError, Copy: func(s string) { u.app.Clipboard().SetContent(s) }}
}

// shownSession is the session shown and its workspace; nil and "" when
// none is open.
func (u *UI) shownSession() (*agent.Session, string) {
	if u.live == nil || u.live.sess == nil {
		return nil, ""
	}
	return u.live.sess, u.live.info.workspace
}

// signInFromBanner is the banner's Sign in for the first server of the
// shown session that waits for it.
func (u *UI) signInFromBanner(live *liveSession, name string) {
	wb, ws, sess := u.wb, live.info.workspace, live.sess
	u.bridge.Work(func() func() {
		servers, err := wb.MCPServers(ws, sess)
		return func() {
			if err != nil {
				u.banner.ShowError("Could not read the MCP configuration: " + err.Error())
				return
			}
			for _, s := range servers {
				if s.Name == name && !s.Shadowed {
					extensions.SignIn(u.extensionHost(), sess, name, s.Config, func(err error) { u.signedIn(name, err) })
					return
				}
			}
			u.banner.ShowError("The MCP server " + name + " is no longer configured; see Settings → MCP servers.")
		}
	})
}

// signedIn tells how a sign-in ended.
func (u *UI) signedIn(name string, err error) {
	if err != nil {
		u.banner.ShowError("Could not sign in to " + name + ": " + err.Error())
		return
	}
	u.banner.ShowInfo("Signed in to " + name + "; its tools are offered from the next request on.")
}
