package tokens

import "strings"

// Fixed texts whose counts were recorded with the unbounded tokenizer, so a
// change to Count that alters ordinary text is caught.
var (
	fixtureProse = "Tally runs coding agents against any OpenAI-compatible backend. " +
		"It keeps a log of every turn, compacts old context when the window fills up, " +
		"and never lets a tool touch files outside the workspace. The quick brown fox jumps over the lazy dog; " +
		"\"quoted\" words, it's and they're contractions, numbers like 1234567 and 3.14159, and an e-mail: dev@example.com.\n"
	fixtureCode = "package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n" +
		"// add returns the sum of a and b.\nfunc add(a, b int) int { return a + b }\n\n" +
		"func main() {\n\tparts := strings.Split(\"a,b,c\", \",\")\n\tfor i, p := range parts {\n\t\tfmt.Printf(\"%d: %s\\n\", i, p)\n\t}\n" +
		"\tvar someVeryLongIdentifierNameForTesting = map[string][]int{\"x\": {1, 2, 3}}\n\t_ = someVeryLongIdentifierNameForTesting\n}\n"
	fixtureJSON = `{"id":"call_0_1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"src/main.go\",\"content\":\"package main\\n\\nfunc main() {}\\n\"}"}}` + "\n"
	fixtureCJK  = "这是一个用于测试的中文段落，其中包含标点符号。日本語の文章もここにあります、そして한국어 문장도 있습니다.\n"
	fixtureMD   = "# Heading\n\n- item one with a link https://github.com/tally-dev/tally/blob/main/engine/llm/openai.go#L120\n" +
		"- item two `inline code` and **bold** text\n\n| col | col |\n|-----|-----|\n| 1 | 2 |\n\n" + strings.Repeat("=", 80) + "\n"
)

// fixtureMix is several chunks long, mixing every fixture.
var fixtureMix = strings.Repeat(fixtureProse+fixtureCode+fixtureJSON+fixtureCJK+fixtureMD, 40)
