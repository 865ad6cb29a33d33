package sandbox

// privateInHome are the paths under the home directory that hold
// credentials: they stay unreadable inside the sandbox even though the
// rest of the home directory is readable. The list follows the credential
// files secret scanners such as gitleaks know of, one line a tool; to add
// one, append its path relative to the home folder here (a folder hides
// everything under it) and a row to the table in docs/security.md.
var privateInHome = []string{
	// Shell and remote logins, signing keys, password stores.
	".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".netrc", ".pgpass", ".my.cnf",
	// Git hosts.
	".git-credentials", ".config/git/credentials", ".config/gh", ".config/hub", ".config/glab-cli",
	// Clouds and their command-line tools.
	".aws", ".azure", ".config/gcloud", ".oci", ".bluemix", ".config/doctl", ".config/hcloud",
	".s3cfg", ".boto", ".config/rclone", ".pulumi/credentials.json",
	".terraform.d/credentials.tfrc.json", ".terraformrc",
	// Containers and clusters.
	".kube", ".docker", ".config/containers/auth.json",
	// Package registries.
	".npmrc", ".yarnrc.yml", ".pypirc", ".gem/credentials", ".cargo/credentials.toml", ".cargo/credentials",
	".nuget/NuGet/NuGet.Config",
	// Secret managers and model hubs.
	".vault-token", ".config/op", ".huggingface/token", ".cache/huggingface/token",
	// The X server's and the session manager's cookies: with one, a
	// process can type into every window of the desktop.
	".Xauthority", ".ICEauthority",
}
