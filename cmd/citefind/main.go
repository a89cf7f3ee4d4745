// Command citefind finds the paper a piece of scientific text should cite.
//
// See `citefind help` and README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/citefind/citefind/cite/csl"
	_ "github.com/citefind/citefind/retrieve/weaviate" // the weaviate:// backend
)

// Version is stamped at build time with -ldflags "-X main.Version=…".
var Version = "dev"

// command is one subcommand.
type command interface {
	Name() string
	Synopsis() string
	Run(ctx context.Context, args []string) error
}

// env is what every command writes to.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// styles renders citations for cite; nil means a new engine per run
	// (tests share one: building a style's engine takes seconds).
	styles *csl.Engine
}

// exitError carries an exit status other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func commands(e env) []command {
	return []command{
		&indexCmd{env: e},
		&queryCmd{env: e},
		&evalCmd{env: e},
		&trainCmd{env: e},
		&removeCmd{env: e}, &statusCmd{env: e},
		&citeCmd{env: e}, &stylesCmd{env: e},
		&statsCmd{env: e},
		&serveCmd{env: e}, &mcpCmd{env: e},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	if err := run(ctx, os.Args[1:], e); err != nil {
		code := 1
		var xe *exitError
		if errors.As(err, &xe) {
			code = xe.code
		}
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "citefind:", err)
		} else {
			code = 0
		}
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "citefind: interrupted; nothing half-written was kept")
			code = 130
		}
		os.Exit(code)
	}
}

func run(ctx context.Context, args []string, e env) error {
	cmds := commands(e)
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			for _, c := range cmds {
				if c.Name() == args[1] {
					return c.Run(ctx, []string{"--help"})
				}
			}
		}
		printUsage(e.stdout, cmds)
		if len(args) == 0 {
			return usageErr("no command given")
		}
		return nil
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(e.stdout, "citefind", Version)
		return nil
	}
	for _, c := range cmds {
		if c.Name() == args[0] {
			return c.Run(ctx, args[1:])
		}
	}
	return usageErr("unknown command %q (see `citefind help`)", args[0])
}

func printUsage(w io.Writer, cmds []command) {
	fmt.Fprintf(w, "citefind %s: find the paper a piece of scientific text should cite.\n\nUsage: citefind COMMAND [flags] [args]\n\nCommands:\n", Version)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name() < cmds[j].Name() })
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-8s %s\n", c.Name(), c.Synopsis())
	}
	fmt.Fprintln(w, "\nRun `citefind COMMAND --help` for a command's flags.")
	fmt.Fprintln(w, "Environment: CITEFIND_DB (database folder), CITEFIND_DATA (benchmark data, default ../shared/data).")
}

// parseArgs parses flags that may appear before or after positional
// arguments ("--" ends flags; "-" is a positional argument).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &exitError{code: 2, err: err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(e env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "%s\n\nFlags:\n", strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs
}
