// Package nodejs runs a JavaScript program on Node.js for the tests that
// compare citefind's goja runtime with Node.js (V8 and ICU): citeproc-js's
// renderings (cite) and the collation (cite/csl).
package nodejs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// Path returns the node executable, or "" when Node.js is not installed
// (scripts/install-test-deps.sh installs it).
func Path() string {
	p, err := exec.LookPath("node")
	if err != nil {
		return ""
	}
	return p
}

// Run runs script with node -e, gives it in as JSON on its standard
// input, and decodes what it writes to standard output as JSON into out.
// An error carries node's standard error.
func Run(ctx context.Context, script string, in, out any) error {
	node := Path()
	if node == "" {
		return fmt.Errorf("node is not installed")
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, node, "-e", script)
	cmd.Stdin = bytes.NewReader(b)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("node's output: %w", err)
	}
	return nil
}
