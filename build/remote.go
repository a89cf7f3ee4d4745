package build

import (
	"context"
	"fmt"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense"
)

// syncRemote brings a remote backend (one that copies the store itself,
// retrieve.Syncer) up to the store: the papers changed and removed since
// the generation it reflects, with vectors from the database's embedder
// (the builtin model is trained or kept in the database folder as for the
// local dense index).
func syncRemote(ctx context.Context, d *db.DB, url, spec string, opts Options) (Report, error) {
	rep := Report{Backend: url, Dense: DenseReport{Embedder: spec}}
	b, err := d.OpenBackend(ctx, url, retrieve.BM25Params{})
	if err != nil {
		return rep, err
	}
	defer b.Close()
	syncer, ok := b.(retrieve.Syncer)
	if !ok {
		return rep, fmt.Errorf("the %s backend cannot be filled from the store (it is no retrieve.Syncer)", b.Name())
	}
	gen, err := d.Store.Generation(ctx)
	if err != nil {
		return rep, err
	}
	rep.Generation = gen
	so := retrieve.SyncOptions{Embedder: spec, Force: opts.Force}
	if spec != db.EmbedderNone {
		emb, prepare, err := syncEmbedder(ctx, d, gen, spec, opts, &rep.Dense)
		if err != nil {
			return rep, err
		}
		so.Model = emb.Model()
		so.Embed = func(ctx context.Context, papers []corpus.Paper) ([][]float32, error) {
			texts := make([]string, len(papers))
			for i, p := range papers {
				texts[i] = dense.PaperText(prepare(p))
			}
			return emb.Embed(ctx, texts)
		}
	}
	var bar *progress.Bar
	if opts.Progress != nil {
		so.Progress = func(done, total int) {
			if bar == nil {
				bar = progress.New(opts.Progress, b.Name()+" sync", int64(total), "papers")
			}
			bar.Set(int64(done), 0)
		}
	}
	sr, err := syncer.Sync(ctx, d.Store, so)
	bar.Done()
	rep.Remote = &sr
	if err != nil {
		return rep, fmt.Errorf("sync the %s backend: %w", b.Name(), err)
	}
	return rep, d.SetEmbedder(ctx, spec)
}

// syncEmbedder returns the embedder of spec for a remote sync and how a
// paper is prepared for it: a trained embedder (builtin, contrast; trained
// on the store, or the saved model kept) embeds title, abstract and
// keywords.
func syncEmbedder(ctx context.Context, d *db.DB, gen int64, spec string, opts Options, rep *DenseReport) (dense.Embedder, func(corpus.Paper) corpus.Paper, error) {
	kind := trainedKinds[spec]
	if kind == nil {
		emb, err := db.OpenEmbedder(d.Dir, spec)
		return emb, func(p corpus.Paper) corpus.Paper { return p }, err
	}
	n, err := d.Store.Count(ctx)
	if err != nil {
		return nil, nil, err
	}
	m, err := trainedModel(ctx, d.Dir, kind, d.Store, gen, n, opts, rep)
	if err != nil {
		return nil, nil, err
	}
	return m, withKeywords, nil
}
