package csl

import "github.com/dop251/goja"

// InstallSpeedups installs citefind's speed-ups into a runtime made by
// NewRuntime, so that tests can compare citeproc-js with and without them.
func (p *Program) InstallSpeedups(vm *goja.Runtime, csl goja.Value) ([]string, error) {
	return p.installSpeedups(vm, csl)
}

// HelperRenders is how many renders of e used a helper processor's
// entries.
func HelperRenders(e *Engine) int64 { return e.helped.Load() }
