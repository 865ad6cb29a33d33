package tool

// Builtins returns new instances of the built-in tools, sorted by name:
// edit_file, grep, list_dir, read_file, run_shell, web_fetch and write_file.
func Builtins() []Tool {
	return []Tool{EditFile(), Grep(), ListDir(), ReadFile(), RunShell(), WebFetch(), WriteFile()}
}
