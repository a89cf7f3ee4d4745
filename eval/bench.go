package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/internal/datadir"
)

// ErrBenchUsage wraps the errors of a benchmark named or given wrongly
// (unknown name, a missing --corpus or --queries): the caller's usage
// error, not a data problem.
var ErrBenchUsage = errors.New("benchmark usage")

// BenchNames lists the benchmarks LoadBench knows, for help texts.
const BenchNames = "acm-cr, acm-cr:contexts, acm-cr:sentences, jsonl, beir[:SPLIT], citeme, litsearch, scholargym"

// Bench is a benchmark resolved from its name and data: its topic sets and
// the collection a database is built from for it.
type Bench struct {
	// Name is the benchmark's name without the topic set ("acm-cr").
	Name string
	// Collection is what a database built for the benchmark records
	// (build.EnsureOptions.Collection); "" when the benchmark brings no
	// collection and an existing database is evaluated as it is.
	Collection string
	// DBName is the default database folder under $CITEFIND_DB/bench.
	DBName string
	// Sets are the topic sets to run.
	Sets []TopicSet
	// Files are the collection's files to ingest; Keep filters their
	// records (nil keeps all).
	Files []string
	Keep  func(corpus.Record) (bool, string)
	// Corpus is BenchOptions.Corpus as given ("" for acm-cr).
	Corpus string
	// litsearch: Corpus is the LitSearch corpus layout, converted to CSL
	// JSON Lines by PrepareCorpus before ingest.
	litsearch bool
	// beir: Files[0] is a BEIR corpus.jsonl, converted likewise.
	beir bool
}

// BenchOptions locate a benchmark's data.
type BenchOptions struct {
	// Data is the benchmark's folder or file; "" means
	// $CITEFIND_DATA/NAME (acm-cr) or $CITEFIND_DATA/formats/NAME.
	Data string
	// Corpus is a collection to index for benchmarks without their own
	// (jsonl, citeme, litsearch, scholargym); "" evaluates an existing
	// database as it is.
	Corpus string
	// Queries is the queries file (jsonl), or the benchmark file of a
	// native format (overrides Data).
	Queries string
	// Sample, when > 0, keeps that many queries of a BEIR split (a fixed
	// sample, see BEIROptions.Sample).
	Sample int
}

// nativeFiles are the default file names of the native-format benchmarks.
var nativeFiles = map[string][]string{
	"citeme":     {"CiteME.tsv", "DATASET.csv"},
	"litsearch":  {"litsearch_queries_with_qrels.jsonl"},
	"scholargym": {"scholargym_bench.jsonl", "scholargym_bench.first200.jsonl"},
}

// LoadBench resolves the benchmark spec ("acm-cr", "acm-cr:contexts",
// "jsonl", "citeme:test", …) and loads its topic sets.
func LoadBench(spec string, o BenchOptions) (*Bench, error) {
	name, setName, _ := strings.Cut(spec, ":")
	b := &Bench{Name: name, Collection: name, DBName: name, Corpus: o.Corpus}
	switch name {
	case "acm-cr":
		dir := o.Data
		if dir == "" {
			dir = datadir.Bench("acm-cr")
		}
		var which []string
		if setName != "" {
			which = []string{setName}
		}
		a, err := LoadACMCR(dir, which...)
		if err != nil {
			return nil, fmt.Errorf("load ACM-CR: %w", err)
		}
		b.Sets, b.Files, b.Keep = a.Sets, a.BibFiles, a.Keep
	case "jsonl":
		if o.Queries == "" {
			return nil, fmt.Errorf("%w: --bench jsonl needs --queries FILE (and --corpus PATH, or the --db of an existing database)", ErrBenchUsage)
		}
		qs, err := LoadJSONLQueries(o.Queries)
		if err != nil {
			return nil, err
		}
		b.Sets = []TopicSet{{Name: strings.TrimSuffix(filepath.Base(o.Queries), filepath.Ext(o.Queries)), Queries: qs}}
		if err := b.useCorpus(o.Corpus, "jsonl-"); err != nil {
			return nil, err
		}
	case "beir":
		if o.Data == "" {
			return nil, fmt.Errorf("%w: --bench beir needs --data DIR, a folder in the BEIR layout (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv)", ErrBenchUsage)
		}
		bb, err := LoadBEIR(o.Data, BEIROptions{Split: setName, Sample: o.Sample})
		if err != nil {
			return nil, err
		}
		b.Name = "beir:" + bb.Name
		b.Sets = []TopicSet{bb.Set}
		if err := b.useCorpus(bb.CorpusPath, "beir-"+bb.Name+"-"); err != nil {
			return nil, err
		}
		b.beir = true
	case "citeme", "litsearch", "scholargym":
		file, err := nativeFile(name, o.Data, o.Queries)
		if err != nil {
			return nil, err
		}
		var set *TopicSet
		switch name {
		case "citeme":
			set, err = LoadCiteME(file, setName)
		case "litsearch":
			set, err = LoadLitSearch(file, setName)
		case "scholargym":
			set, err = LoadScholarGym(file, setName)
		}
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", name, err)
		}
		b.Sets = []TopicSet{*set}
		if err := b.useCorpus(o.Corpus, "corpus-"); err != nil {
			return nil, err
		}
		if b.Corpus != "" && name == "litsearch" {
			if fi, err := os.Stat(b.Files[0]); err == nil && !fi.IsDir() {
				if b.litsearch, err = IsLitSearchCorpus(b.Files[0]); err != nil {
					return nil, fmt.Errorf("corpus: %w", err)
				}
			}
		}
	default:
		return nil, fmt.Errorf("%w: unknown benchmark %q (%s)", ErrBenchUsage, spec, BenchNames)
	}
	return b, nil
}

// useCorpus makes corpus (a file or folder) the benchmark's collection;
// "" leaves it without one (an existing database is evaluated as it is).
// The database depends on the corpus only: benchmarks over the same
// corpus share it.
func (b *Bench) useCorpus(path, prefix string) error {
	if path == "" {
		b.Collection, b.DBName = "", ""
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	h := sha256.Sum256([]byte(abs))
	b.Collection = "corpus " + abs
	b.DBName = prefix + hex.EncodeToString(h[:4])
	b.Files = []string{abs}
	return nil
}

// nativeFile finds the benchmark file of a native-format benchmark:
// queries when given, else data (a file, or a folder holding one of the
// default file names), else $CITEFIND_DATA/formats/NAME.
func nativeFile(name, data, queries string) (string, error) {
	if queries != "" {
		return queries, nil
	}
	if data == "" {
		data = datadir.Bench(filepath.Join("formats", name))
	}
	fi, err := os.Stat(data)
	if err != nil {
		return "", fmt.Errorf("%s data: %w", name, err)
	}
	if !fi.IsDir() {
		return data, nil
	}
	for _, f := range nativeFiles[name] {
		p := filepath.Join(data, f)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s data: none of %s in %s (give the file with --data FILE)", name, strings.Join(nativeFiles[name], ", "), data)
}

// PrepareCorpus converts a LitSearch-layout or BEIR corpus into CSL JSON
// Lines in the database folder dir, and makes that the file to ingest;
// other benchmarks need nothing. The conversion is deterministic, so an
// unchanged corpus gives the same file, which ingest then skips. Bad rows
// go to bad (the first ten) and are counted in the returned message.
func (b *Bench) PrepareCorpus(ctx context.Context, dir string, bad func(*corpus.ParseError)) (string, error) {
	convert, kind, base := ConvertLitSearchCorpus, "LitSearch", "litsearch-corpus.csl.jsonl"
	switch {
	case b.beir:
		convert, kind, base = ConvertBEIRCorpus, "BEIR", "beir-corpus.csl.jsonl"
	case !b.litsearch:
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create benchmark database: %w", err)
	}
	out := filepath.Join(dir, base)
	in, err := os.Open(b.Files[0])
	if err != nil {
		return "", err
	}
	defer in.Close()
	nbad, n := 0, 0
	err = atomicfile.Write(out, 0o644, func(f *os.File) error {
		var err error
		n, err = convert(ctx, in, b.Files[0], io.Writer(f), func(pe *corpus.ParseError) {
			nbad++
			if nbad <= 10 && bad != nil {
				bad(pe)
			}
		})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("convert the %s corpus: %w", kind, err)
	}
	msg := fmt.Sprintf("%s corpus %s: %d papers converted to %s, %d bad rows skipped", kind, b.Files[0], n, out, nbad)
	b.Files = []string{out}
	return msg, nil
}
