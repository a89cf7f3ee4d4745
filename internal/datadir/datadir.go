// Package datadir locates the benchmark data folder.
//
// The folder is $CITEFIND_DATA when set, else ../shared/data: relative to
// the module root when running inside the source tree (tests run in package
// folders), else relative to the working directory.
//
//	dir := datadir.Dir()              // e.g. /work/shared/data
//	acm := datadir.Bench("acm-cr")    // dir + "/acm-cr"
package datadir

import (
	"os"
	"path/filepath"
)

// Env is the environment variable that overrides the data folder.
const Env = "CITEFIND_DATA"

// Dir returns the benchmark data folder (it may not exist).
func Dir() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	if root := ModuleRoot(); root != "" {
		return filepath.Join(filepath.Dir(root), "shared", "data")
	}
	return filepath.Join("..", "shared", "data")
}

// Bench returns the folder of one benchmark, e.g. Bench("acm-cr").
func Bench(name string) string { return filepath.Join(Dir(), name) }

// ModuleRoot returns the nearest enclosing folder of the working directory
// that holds citefind's go.mod, or "" when there is none.
func ModuleRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && len(b) > 0 && containsModule(b) {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func containsModule(b []byte) bool {
	const want = "module github.com/citefind/citefind"
	for i := 0; i+len(want) <= len(b); i++ {
		if string(b[i:i+len(want)]) == want {
			return true
		}
	}
	return false
}
