package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Caches are the build caches of commands run in one workspace: the
// environment entries that point the toolchains at them and the folders
// the sandbox lets the commands write.
type Caches struct {
	// Env are NAME=value entries that replace the inherited ones.
	Env []string
	// Writable are the folders of the caches, to add to Policy.Writable.
	Writable []string
}

// defaultGoProxy is the Go toolchain's own default module proxy list.
const defaultGoProxy = "https://proxy.golang.org,direct"

// PrivateCaches returns the build caches commands run in workspace get:
// folders of Tally's own under root (one set per workspace), never the
// user's. A command that may write a cache shared with the user's builds
// can plant code they later run (an edited module in the module cache, a
// forged entry in the build cache), so the sandbox never lets it:
//
//   - Go: GOCACHE is the workspace's own. The user's module cache stays
//     readable; with the network off it is used as it is (read-only), with
//     the network on GOMODCACHE is the workspace's own and GOPROXY first
//     reads the user's downloaded modules (verified against go.sum as
//     usual), then the proxy the user configured.
//   - npm, pip and Cargo: npm_config_cache, PIP_CACHE_DIR and CARGO_HOME
//     are the workspace's own.
//
// base is the command's environment before the caches (for GOPROXY,
// GOMODCACHE and GOPATH). The folders are created now, mode 0700, so a
// cache is writable from the first command even when the user's own does
// not exist yet.
func PrivateCaches(root, workspace string, base []string, allowNetwork bool) (Caches, error) {
	if root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return Caches{}, fmt.Errorf("no cache folder for sandboxed builds (%w); set XDG_CACHE_HOME or HOME", err)
		}
		root = filepath.Join(dir, "tally", "sandbox")
	}
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	vars := envMap(base)
	userModCache := userGoModCache(vars)

	c := Caches{}
	own := func(name, sub string) {
		p := filepath.Join(dir, sub)
		c.Env = append(c.Env, name+"="+p)
		c.Writable = append(c.Writable, p)
	}
	own("GOCACHE", "go-build")
	if allowNetwork {
		own("GOMODCACHE", "go-mod")
		proxy := vars["GOPROXY"]
		if proxy == "" {
			proxy = defaultGoProxy
		}
		if dl := filepath.Join(userModCache, "cache", "download"); userModCache != "" && isDir(dl) {
			proxy = "file://" + filepath.ToSlash(dl) + "," + proxy
		}
		c.Env = append(c.Env, "GOPROXY="+proxy)
	} else if userModCache != "" {
		c.Env = append(c.Env, "GOMODCACHE="+userModCache)
	}
	own("npm_config_cache", "npm")
	own("PIP_CACHE_DIR", "pip")
	own("CARGO_HOME", "cargo")
	for _, p := range c.Writable {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return Caches{}, fmt.Errorf("the sandbox's build cache %s cannot be created (%w); check that %s is writable", p, err, root)
		}
	}
	return c, nil
}

// userGoModCache returns the module cache the user's own Go builds use.
func userGoModCache(vars map[string]string) string {
	if v := vars["GOMODCACHE"]; filepath.IsAbs(v) {
		return v
	}
	gopath := vars["GOPATH"]
	if gopath == "" {
		if home := vars["HOME"]; home != "" {
			gopath = filepath.Join(home, "go")
		}
	}
	if first := filepath.SplitList(gopath); len(first) > 0 && filepath.IsAbs(first[0]) {
		return filepath.Join(first[0], "pkg", "mod")
	}
	return ""
}

// envMap returns the NAME=value entries of env as a map (the last wins).
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok {
			m[name] = value
		}
	}
	return m
}

// isDir reports whether p is a directory now.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
