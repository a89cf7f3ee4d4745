package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
)

type removeCmd struct{ env }

func (c *removeCmd) Name() string { return "remove" }
func (c *removeCmd) Synopsis() string {
	return "remove papers (IDs or aliases) from the store and every index"
}

const removeUsage = `Usage: citefind remove [--db DIR] [--wait DURATION] [--quiet] ID...

Removes the papers named by ID (paper IDs or aliases such as BibTeX keys)
from the store of DIR and from its indexes. Unknown IDs are an error listing
them; the others are removed. A removed paper comes back only if a file
holding it is indexed again after it changed (or with --force).`

func (c *removeCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "remove", removeUsage)
	dir := dbFlag(fs)
	wait := waitFlag(fs)
	quiet := fs.Bool("quiet", false, "no progress display")
	ids, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usageErr("remove: no ID given")
	}
	if _, err := os.Stat(filepath.Join(*dir, db.StoreFile)); err != nil {
		return fmt.Errorf("%w at %s", db.ErrNoDatabase, *dir)
	}
	lock, err := lockDB(ctx, c.env, *dir, *wait)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	d, err := db.Open(ctx, *dir)
	if err != nil {
		return err
	}
	defer d.Close()
	st := d.Store
	res, err := st.Resolve(ctx, ids)
	if err != nil {
		return err
	}
	var unknown, known []string
	for _, id := range ids {
		if _, ok := res[id]; ok {
			known = append(known, id)
		} else {
			unknown = append(unknown, id)
		}
	}
	n, err := st.Remove(ctx, known...)
	if err != nil {
		return err
	}
	opts := build.Options{Progress: c.stderr}
	if *quiet {
		opts.Progress = nil
	}
	rep, err := build.Indexes(ctx, d, opts)
	if err != nil {
		return fmt.Errorf("removed %s from the store, but updating the indexes failed (run `citefind index --db %s`): %w", plural(n, "paper"), *dir, err)
	}
	total, err := st.Count(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "removed %s; %d in the store", plural(n, "paper"), total)
	switch {
	case rep.SparseUpdated:
		fmt.Fprintf(c.stdout, "; bm25 index updated (%d deleted)\n", rep.Update.Deleted)
	case rep.SparseBuilt:
		fmt.Fprintf(c.stdout, "; bm25 index rebuilt\n")
	default:
		fmt.Fprintln(c.stdout)
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("%w: %s", corpus.ErrNotFound, strings.Join(unknown, " "))
	}
	return nil
}
