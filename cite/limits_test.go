package cite_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
)

func TestLimits(t *testing.T) {
	limits := cite.Limits{MaxCitations: 3, MaxQuotes: 2, MaxQuoteChars: 10}
	tests := []struct {
		name      string
		doc       string
		what      string // "" when within the limits
		line, col int
	}{
		{"three IDs", "[[cite:a]] [[cite:b,c]]", "", 0, 0},
		{"fourth ID", "[[cite:a]] [[cite:b,c]]\nx [[cite:d]]", "cited IDs in one document", 2, 10},
		{"in one list", "[[cite:a,b,c,d]]", "cited IDs in one document", 1, 14},
		{"secondary sources count", "[[cite:a|b]] [[cite:c|d]]", "cited IDs in one document", 1, 23},
		{"anchors count", "<!--cite:a,b-->[1]<!--/cite--> ⟦cite:c,d⟧", "cited IDs in one document", 1, 40},
		{"number ranges count", "[1]: cite:a\n\nsee [1-900]", "cited IDs in one document", 3, 5},
		{"map lines of many IDs", "[1]: cite:a,b\n\n[1] and [1]", "cited IDs in one document", 3, 9},
		{"two quotes", `[[cite:a "x"]] [[cite:b "y"]]`, "", 0, 0},
		{"third quote", `[[cite:a "x", b "y"]] [[cite:c "z"]]`, "quotes in one document", 1, 30},
		{"map line quotes count once", "[1]: cite:a \"x\"\n[2]: cite:b \"y\"\n[3]: cite:c \"z\"\n\n[1]", "quotes in one document", 3, 11},
		{"numbered uses repeat the map's quote", "[1]: cite:a \"x\"\n\n[1] [1] [1]", "", 0, 0},
		{"ten characters", `[[cite:a "0123456789"]]`, "", 0, 0},
		{"long quote", `[[cite:a "0123456789é"]]`, "characters in one quote", 1, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cite.ParseContext(t.Context(), tc.doc, limits)
			if tc.what == "" {
				require.NoError(t, err)
				_, err = cite.ParseContext(t.Context(), tc.doc+" [[cite:e]]", cite.Limits{})
				require.NoError(t, err, "no limits")
				return
			}
			require.ErrorIs(t, err, cite.ErrLimit)
			assert.NotErrorIs(t, err, cite.ErrSyntax)
			var le *cite.LimitError
			require.True(t, errors.As(err, &le))
			assert.Equal(t, tc.what, le.What)
			assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{le.Line, le.Col}, le.Error())
			assert.Contains(t, le.Error(), fmt.Sprintf("more than %d %s", le.Limit, tc.what))

			// Resolve applies the same limits, before any lookup.
			st := testStore()
			_, err = cite.Resolve(t.Context(), tc.doc, st, cite.Options{Limits: limits, Lenient: true})
			require.ErrorIs(t, err, cite.ErrLimit)
			assert.Zero(t, st.calls)
		})
	}
}

// TestResolveHonoursContext: a resolution whose context has ended stops
// with the context's error, even with a Lookup that ignores it.
func TestResolveHonoursContext(t *testing.T) {
	st := testStore()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := cite.Resolve(ctx, draftOf(1000, " "), st, cite.Options{})
	require.ErrorIs(t, err, context.Canceled)
	_, err = cite.ParseContext(ctx, "[[cite:a]]", cite.Limits{})
	require.ErrorIs(t, err, context.Canceled)

	// With a deadline that passes while the store answers, rendering does
	// not start.
	slow := &ctxStore{fakeStore: testStore()}
	ctx, cancel = context.WithCancel(t.Context())
	slow.during = cancel
	_, err = cite.Resolve(ctx, draftOf(10, "\n"), slow, cite.Options{})
	require.ErrorIs(t, err, context.Canceled)
}

// ctxStore calls during in GetMany, then answers regardless of ctx.
type ctxStore struct {
	*fakeStore
	during func()
}

func (s *ctxStore) GetMany(ctx context.Context, ids []string) (map[string]corpus.Paper, error) {
	s.during()
	return s.fakeStore.GetMany(ctx, ids)
}

// TestParseErrorCap: a document of many malformed placeholders lists the
// first MaxSyntaxErrors and counts the rest.
func TestParseErrorCap(t *testing.T) {
	_, err := cite.Parse(strings.Repeat("[[cite:]] ", cite.MaxSyntaxErrors+50))
	require.ErrorIs(t, err, cite.ErrSyntax)
	var el cite.ErrorList
	require.True(t, errors.As(err, &el))
	require.Len(t, el, cite.MaxSyntaxErrors+1)
	assert.Contains(t, el[len(el)-1].Error(), "50 more malformed placeholders not listed")
	var se *cite.SyntaxError
	require.True(t, errors.As(el[cite.MaxSyntaxErrors-1], &se))
	assert.Equal(t, 1+10*(cite.MaxSyntaxErrors-1)+7, se.Col)
}

// TestParseLongLine: on one long line, with characters of several bytes,
// every placeholder's column counts characters (the incremental count
// that keeps Parse linear gives the same columns as counting from the
// start of the line).
func TestParseLongLine(t *testing.T) {
	const n = 5000
	var b strings.Builder
	var cols []int
	for i := range n {
		b.WriteString("é ⟦x⟧ ")
		cols = append(cols, utf8.RuneCountInString(b.String())+1)
		fmt.Fprintf(&b, "[[cite:p%d]]", i)
	}
	d, err := cite.Parse("first line\n" + b.String())
	require.NoError(t, err)
	require.Len(t, d.Citations, n)
	for i, c := range d.Citations {
		require.Equal(t, [2]int{2, cols[i]}, [2]int{c.Line, c.Col}, "citation %d", i)
		require.Equal(t, cols[i]+7, c.Items[0].Col)
	}
}
