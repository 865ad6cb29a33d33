package config

import "testing"

func TestVisionFor(t *testing.T) {
	var s Settings
	if s.VisionFor("deepseek-chat") || !s.VisionFor("gpt-4o") {
		t.Fatal("without a choice, the known-model table decides")
	}
	s = s.SetVision("DeepSeek-Chat", true).SetVision("gpt-4o", false)
	if !s.VisionFor("deepseek-chat") || s.VisionFor("GPT-4o") {
		t.Errorf("the saved choices are not used: %v", s.Vision)
	}
	// Back to what the table says: the choice is dropped.
	s = s.SetVision("deepseek-chat", false).SetVision("gpt-4o", true)
	if s.Vision != nil {
		t.Errorf("choices equal to the table are kept: %v", s.Vision)
	}
	before := Settings{}.SetVision("my-local-vlm", true)
	after := before.SetVision("other", true)
	if len(before.Vision) != 1 || len(after.Vision) != 2 {
		t.Error("SetVision wrote the settings' own map")
	}
	if (Settings{}).SetVision("  ", true).Vision != nil {
		t.Error("a choice was saved for no model")
	}
}
