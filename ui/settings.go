package ui

import (
	"github.com/tally-dev/tally/engine/workbench"
	"github.com/tally-dev/tally/ui/settings"
)

// settingsFor returns what the banner's Settings button does for why:
// open the settings, on the API key field when the key is what is missing.
func (u *UI) settingsFor(why error) func() {
	if !workbench.MissingKey(why) {
		return u.showSettings
	}
	return func() {
		if f := u.openSettings(); f != nil {
			f.Focus(settings.APIKey)
		}
	}
}

// showSettings opens the settings dialog.
func (u *UI) showSettings() { u.openSettings() }

// openSettings opens the settings dialog and returns its form; nil when
// there are no settings to edit (the data could not be opened).
func (u *UI) openSettings() *settings.Form {
	if u.wb == nil {
		return nil
	}
	return settings.Open(u.settingsHost())
}

// settingsHost is what the settings dialog gets of the window: the saved
// settings and the shown session.
func (u *UI) settingsHost() settings.Host {
	wb := u.wb
	h := settings.Host{
		Window: u.win, Work: u.bridge.Work, Show: u.showView, Saved: u.settings,
		Resolve:  func(s workbench.Settings) workbench.Resolved { return wb.ResolveWith(workbench.Flags{}, s) },
		Shown:    func() bool { return u.live != nil },
		OpenFile: u.openFile, ShowMCP: u.showMCPSettings, ShowHooks: u.showHooksSettings, Apply: u.applySettings,
	}
	tokens, profile := previewTokens, u.settings.Profile // the chain's preview: the shown session's context, else a mid-sized one
	h.PreviewFallback = func(s workbench.Settings, names []string) ([]workbench.FallbackStep, error) {
		return wb.FallbackPreviewWith(s, names, profile, tokens)
	}
	if live := u.live; live != nil && live.sess != nil {
		v := live.sess.Snapshot()
		tokens, profile = max(v.Level, 1), v.Meta.Profile
		h.Session = &settings.Session{Model: live.info.model, Demo: live.info.demo, LanguageServers: live.sess.LanguageServers().Status}
		if !live.info.demo {
			h.Session.Forecast = live.sess.Compaction().KeepForecast
		}
	}
	return h
}

// applySettings makes s current, saves it and reconnects the open session.
func (u *UI) applySettings(s workbench.Settings) {
	// The keyboard sheet's preferences are not on the form: keep them as
	// they are now, even if they changed while the form was open.
	s.TextScale, s.EnterNewline = u.settings.TextScale, u.settings.EnterNewline
	u.settings = s
	u.applyTheme()
	wb := u.wb
	u.bridge.Work(func() func() {
		err := wb.SaveSettings(s)
		return func() {
			if err != nil {
				u.banner.ShowError("Could not save the settings: " + err.Error())
				return
			}
			u.settings = wb.Settings()
			// Sessions are configured from the saved settings: reconnect
			// the open one once they are stored.
			if live := u.live; live != nil && !live.job.running && !live.info.demo {
				u.live = nil
				u.openSession(live.id)
			} else if live == nil {
				u.showWelcome()
			}
		}
	})
}
