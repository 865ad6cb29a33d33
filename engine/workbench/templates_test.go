package workbench

// The scripted server renders requests through the real chat templates in
// these tests, as an inference server would.
import _ "github.com/tally-dev/tally/engine/llm/llmtest/chattemplates"
