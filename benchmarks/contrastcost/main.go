// Command contrastcost measures what the contrast embedder costs on a
// database: training on every paper of its store, saving the model, and
// embedding every paper (in batches of 256, as the dense index build
// does), with wall times and the process's peak resident memory (VmHWM of
// /proc/self/status).
//
//	go run ./benchmarks/contrastcost -db .cache/measure/acm-cr [-dim 768 -epochs 10 -bigrams 0] [-cpuprofile FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/dense/contrast"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "contrastcost:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("contrastcost", flag.ContinueOnError)
	db := fs.String("db", "", "database `DIR` (its papers.sqlite is read)")
	out := fs.String("out", "", "model `FILE` to write (default: a temporary file)")
	cpu := fs.String("cpuprofile", "", "write a CPU profile to `FILE`")
	mem := fs.String("memprofile", "", "write an allocation profile of the training to `FILE`")
	var o contrast.Options
	fs.IntVar(&o.Dim, "dim", 0, "dimensions (0: default)")
	fs.IntVar(&o.Epochs, "epochs", 0, "epochs (0: default)")
	fs.IntVar(&o.Bigrams, "bigrams", 0, "bigram buckets (0: default, -1: none)")
	fs.IntVar(&o.Batch, "batch", 0, "batch size (0: default)")
	fs.IntVar(&o.MinDF, "mindf", 0, "least number of papers a term must be in (0: default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *db == "" {
		return errors.New("-db is required")
	}
	st, err := corpus.OpenStore(ctx, filepath.Join(*db, "papers.sqlite"))
	if err != nil {
		return err
	}
	defer st.Close()
	if *cpu != "" {
		f, err := os.Create(*cpu)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var walkErr error
	papers := iter.Seq[corpus.Paper](func(yield func(corpus.Paper) bool) {
		stopped := errors.New("stopped")
		err := st.Each(ctx, func(p corpus.Paper) error {
			if !yield(p) {
				return stopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopped) {
			walkErr = err
		}
	})
	if *mem != "" {
		runtime.MemProfileRate = 64 << 10
	}
	start := time.Now()
	last := start
	m, err := contrast.Train(ctx, papers, o, func(p contrast.Progress) {
		if p.Stage == "train" && p.Step == p.Steps {
			fmt.Fprintf(os.Stderr, "epoch %d/%d loss %.4f %s\n", p.Epoch, p.Epochs, p.Loss, time.Since(last).Round(time.Millisecond))
			last = time.Now()
		}
	})
	if err != nil {
		return err
	}
	if walkErr != nil {
		return walkErr
	}
	train := time.Since(start)
	if *mem != "" {
		if err := writeHeapProfile(*mem); err != nil {
			return err
		}
	}
	path := *out
	if path == "" {
		dir, err := os.MkdirTemp("", "contrastcost")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "contrast.model")
	}
	sstart := time.Now()
	if err := contrast.SaveFile(path, m); err != nil {
		return err
	}
	save := time.Since(sstart)
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	estart := time.Now()
	var batch []string
	n := 0
	var sink [][]float32
	flush := func() error {
		vecs, err := m.Embed(ctx, batch)
		sink = append(sink, vecs...)
		n += len(batch)
		batch = batch[:0]
		return err
	}
	err = st.Each(ctx, func(p corpus.Paper) error {
		batch = append(batch, contrast.Text(p))
		if len(batch) == 256 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	embed := time.Since(estart)
	fmt.Printf("model %s (%s, %d terms, %d papers): train %s, save %s (%.0f MB), embed %d papers %s, total %s, peak RSS %s, GOMAXPROCS %d\n",
		m.Model(), m.Spec(), m.Terms(), m.Docs(), train.Round(time.Millisecond), save.Round(time.Millisecond), float64(fi.Size())/1e6,
		n, embed.Round(time.Millisecond), (train + save + embed).Round(time.Millisecond), peakRSS(), runtime.GOMAXPROCS(0))
	runtime.KeepAlive(sink)
	return nil
}

// peakRSS returns VmHWM from /proc/self/status ("?" elsewhere).
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// writeHeapProfile writes the allocation profile so far to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
