package cite_test

import (
	"flag"
	"os"
	"testing"

	"github.com/citefind/citefind/cite/csl"
)

var updateReport = flag.Bool("update", false, "rewrite testdata/pandoc/report.txt with the measured differences from pandoc")

// engine is shared by the tests: building a citeproc-js processor takes
// 0.1–1 s per style, so each style is built once.
var engine *csl.Engine

func TestMain(m *testing.M) {
	engine = csl.New(csl.Options{})
	os.Exit(m.Run())
}
