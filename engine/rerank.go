package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/internal/llm"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/rerank/learned"
	"github.com/citefind/citefind/selector"
)

// Reranker returns the named reranker (citefind.RerankerNames; "" is
// none), made on first use from the engine's Options: the learned
// reranker with Options.RerankModel (else the database's own model,
// db.LearnedModelFile, else the model that ships with citefind for the
// pipeline's retrievers; read when first used, and the database's own
// model again whenever its file changes), the LLM reranker
// with Options.LLM and Options.Ollama.
func (e *Engine) Reranker(name string) (rerank.Reranker, error) {
	return e.reranker(name, e.Pipeline().Retrievers)
}

// reranker is Reranker for a search that fuses the retrievers names: the
// built-in learned model is the one trained for them when citefind ships
// one (learned.DefaultFor).
func (e *Engine) reranker(name string, names []string) (rerank.Reranker, error) {
	if name == "" {
		name = rerank.NameNone
	}
	if err := citefind.CheckReranker(name); err != nil {
		return nil, err
	}
	key := name
	if name == rerank.NameLearned {
		set := slices.Clone(names)
		slices.Sort(set)
		key += "|" + strings.Join(slices.Compact(set), ",")
	}
	prefix := key
	if name == rerank.NameLearned && e.opts.RerankModel == "" && e.db != nil {
		// The database's own model is re-read when the file changes (a
		// train --self while serve runs).
		key += "|" + fileStamp(filepath.Join(e.db.Dir, db.LearnedModelFile))
	}
	e.rerankMu.Lock()
	defer e.rerankMu.Unlock()
	if r, ok := e.rerankers[key]; ok {
		return r, nil
	}
	var r rerank.Reranker
	var err error
	switch name {
	case rerank.NameNone:
		r = rerank.None{}
	case rerank.NameLearned:
		r, err = e.learnedReranker(names)
	case rerank.NameLLM:
		var client *api.Client
		if client, err = e.ollama(); err == nil {
			r, err = rerank.NewLLM(client, rerank.LLMOptions{Model: llm.Model(e.opts.LLM)})
		}
	}
	if err != nil {
		return nil, err
	}
	if e.rerankers == nil {
		e.rerankers = map[string]rerank.Reranker{}
	}
	for k := range e.rerankers {
		if strings.HasPrefix(k, prefix+"|") {
			delete(e.rerankers, k) // an older model file's
		}
	}
	e.rerankers[key] = r
	return r, nil
}

// fileStamp identifies a file's version (size and modification time);
// "none" when it does not exist.
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "none"
	}
	return fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
}

// learnedReranker loads Options.RerankModel, else the database's own
// model (db.LearnedModelFile, written by citefind train --self) when it
// has one, else the model that ships with citefind for the retrievers
// names.
func (e *Engine) learnedReranker(names []string) (*learned.Reranker, error) {
	if e.opts.RerankModel != "" {
		return learned.Load(e.opts.RerankModel)
	}
	if e.db != nil { // a database's own model (train --self)
		own := filepath.Join(e.db.Dir, db.LearnedModelFile)
		if _, err := os.Stat(own); err == nil {
			return learned.Load(own)
		}
	}
	return learned.DefaultFor(names)
}

func (e *Engine) ollama() (*api.Client, error) {
	if e.opts.Ollama != nil {
		return e.opts.Ollama, nil
	}
	c, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, fmt.Errorf("Ollama client (OLLAMA_HOST): %w", err)
	}
	return c, nil
}

// Picker returns the picker: the LLM picker when a chat model is
// configured (Options.LLM or $CITEFIND_LLM), else the top rank.
func (e *Engine) Picker() (selector.Picker, error) {
	e.rerankMu.Lock()
	defer e.rerankMu.Unlock()
	if e.pickerVal != nil {
		return e.pickerVal, nil
	}
	if e.opts.LLM == "" && os.Getenv(llm.EnvModel) == "" {
		e.pickerVal = selector.TopRank{}
		return e.pickerVal, nil
	}
	client, err := e.ollama()
	if err != nil {
		return nil, err
	}
	p, err := selector.New(client, selector.Options{Model: llm.Model(e.opts.LLM)})
	if err != nil {
		return nil, err
	}
	e.pickerVal = p
	return p, nil
}
