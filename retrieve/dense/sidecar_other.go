//go:build !linux

package dense

import "os"

// mapFile is not used on this system: the sidecar is read instead.
func mapFile(*os.File, int64) ([]byte, func(), error) { return nil, nil, errNoMmap }
