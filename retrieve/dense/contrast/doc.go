// Package contrast is an offline embedder trained on the corpus itself.
package contrast
