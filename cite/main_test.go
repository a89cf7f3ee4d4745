package cite_test

import "flag"

var updateReport = flag.Bool("update", false, "rewrite testdata/styles/pandoc-diff.txt with the measured differences from pandoc")
