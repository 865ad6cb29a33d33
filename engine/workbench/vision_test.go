package workbench

import (
	"testing"
	"time"

	"github.com/tally-dev/tally/engine/transcript"
)

// The session's Config.Vision is the Settings choice for its model, the
// known-model table's answer without one, and --vision over both.
func TestConfigVision(t *testing.T) {
	w := bench(t, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "k", "TALLY_MODEL": "my-vlm"})
	vision := func(o SessionOptions) bool {
		t.Helper()
		cfg, err := w.Config(o)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Vision
	}
	if vision(SessionOptions{}) {
		t.Error("an unknown model is taken to accept images")
	}
	if !vision(SessionOptions{Vision: true}) {
		t.Error("--vision is ignored")
	}
	if err := w.SaveSettings(w.Settings().SetVision("my-vlm", true)); err != nil {
		t.Fatal(err)
	}
	if !vision(SessionOptions{}) {
		t.Error("the Settings choice is ignored")
	}
	if !vision(SessionOptions{Flags: Flags{Model: "gpt-4o"}}) || vision(SessionOptions{Flags: Flags{Model: "deepseek-chat"}}) {
		t.Error("the known-model table is not used for a model without a choice")
	}
}

// An exported document names each picture where the message had it.
func TestExportNamesImages(t *testing.T) {
	m := transcript.UserText("<turn_meta>\nx\n</turn_meta>", "Look:", time.Time{})
	m.Blocks = append(m.Blocks, transcript.ImageBlock(transcript.ImageRef{SHA256: "ab", MediaType: "image/png", Width: 800, Height: 600, Size: 12 << 10, Name: "shot.png"}))
	if got, want := userText(m), "Look:\n[image: shot.png, PNG, 800×600, 12 KB]"; got != want {
		t.Errorf("userText = %q; want %q", got, want)
	}
}
