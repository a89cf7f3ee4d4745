package corpus_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"10.1145/3397271.3401032", true},
		{"arxiv:1706.03762", true},
		{"arxiv:hep-th/9901001", true},
		{"h:3f2a9c01b2de", true},
		{"cormack2009rrf", true},
		{"DBLP:journals/corr/abs-2004-04906", true},
		{"10.1002/(sici)1097-4571(199806)49:8%3c693::aid-asi4%3e3.0.co;2-0", true},
		{"müller2020", true},
		{"10.5555/a%2cb", true},
		{"", false},
		{"a b", false},
		{"a,b", false},
		{"a|b", false},
		{`a"b`, false},
		{"a]b", false},
		{"a[b", false},
		{"a⟦b", false},
		{"a<b", false},
		{"a\x00b", false},
		{"a\tb", false},
		{"a%zz", false},
		{"a%2", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{"10.1234/../../healthz", false},
		{"x/./y", false},
		{"..", false},
		{"a/.../b", true},
		{"a?b", false},
		{"a#b", false},
		{"a\xffb", false},
		{strings.Repeat("a", corpus.MaxIDLen), true},
		{strings.Repeat("a", corpus.MaxIDLen+1), false},
	}
	re := regexp.MustCompile(corpus.IDPattern)
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			assert.Equal(t, tc.want, corpus.ValidID(tc.id))
			if len(tc.id) <= corpus.MaxIDLen {
				assert.Equal(t, tc.want, re.MatchString(tc.id), "IDPattern agrees")
			}
		})
	}
}

func TestEscapeID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cormack2009rrf", "cormack2009rrf"},
		{"10.5555/a,b|c", "10.5555/a%2cb%7cc"},
		{"a b", "a%20b"},
		{`say "hi"`, "say%20%22hi%22"},
		{"[x]", "%5bx%5d"},
		{"50%", "50%25"},
		{"50%2c", "50%2c"},
		{"/a", "%2fa"},
		{"a/", "a%2f"},
		{"a//b", "a/%2fb"},
		{"/", "%2f"},
		{"10.1234/../../../healthz", "10.1234/%2e%2e/%2e%2e/%2e%2e/healthz"},
		{"x/./y", "x/%2e/y"},
		{"⟦k⟧", "%e2%9f%a6k%e2%9f%a7"},
		{"a\xffb", "a%ffb"},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := corpus.EscapeID(tc.in)
			assert.Equal(t, tc.want, got)
			if tc.in != "" {
				assert.True(t, corpus.ValidID(got), got)
			}
			assert.Equal(t, got, corpus.EscapeID(got), "idempotent")
		})
	}
}

func TestNormalizeDOIIsSafe(t *testing.T) {
	tests := []struct{ in, id, clean string }{
		{"10.5555/A,B", "10.5555/a%2cb", "10.5555/A,B"},
		{"https://doi.org/10.5555/A%2CB", "10.5555/a%2cb", "10.5555/A,B"},
		{"10.1234/../../../healthz", "10.1234/%2e%2e/%2e%2e/%2e%2e/healthz", "10.1234/../../../healthz"},
		{"10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0", "10.1002/(sici)1097-4571(199806)49:8%3c693::aid-asi4%3e3.0.co;2-0", "10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0"},
		{"10.1145/12 34", "", ""},    // white space: not a DOI
		{"10.1145/12\x0034", "", ""}, // control character
		{"10.abc/x", "", ""},         // registrant not numeric
		{"10.1145/", "", ""},         // no suffix
		{"10.1145/" + strings.Repeat("x", corpus.MaxIDLen), "", ""}, // too long for an ID
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			assert.Equal(t, tc.id, corpus.NormalizeDOI(tc.in))
			assert.Equal(t, tc.clean, corpus.CleanDOI(tc.in))
			if tc.id != "" {
				assert.True(t, corpus.ValidID(tc.id))
				assert.Equal(t, tc.id, corpus.NormalizeDOI(tc.id), "idempotent")
			}
		})
	}
}

// hostileString builds a random string from characters that break IDs,
// placeholders, anchors, URLs and JSON, and ordinary ones.
func hostileString(rng *rand.Rand, n int) string {
	alphabet := []string{"a", "B", "7", ".", "/", "..", "-", "_", ",", "|", `"`, "[", "]", "⟦", "⟧", " ", "\t", "\n",
		"\x00", "\x1f", "%", "%2c", "?", "#", "<", ">", "-->", "\\", "{", "}", "'", "é", "ß", "中", "\u200b", "\u2028",
		"\xff", ":", ";", "(", ")", "*", "&", "+", "=", "@", "$", "~", "`", "^"}
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[rng.Intn(len(alphabet))])
	}
	return b.String()
}

// placeholderBreakers are the characters the [[cite:ID]] grammar does not
// allow in an ID (cite/parse.go), and the end of an HTML comment anchor.
var placeholderBreakers = []string{" ", "\t", "\n", ",", "|", `"`, "[", "]", "⟦", "⟧", "-->"}

// TestStoredIDsAreSafe is a property test: records with random hostile
// DOIs and keys are ingested, read as CSL-JSON and BibTeX; every paper ID
// and alias the store then holds is a ValidID (so it fits the citation
// placeholder, an anchor and a URL path), and every record's key (valid
// UTF-8, short enough) still finds its paper, as written and escaped.
func TestStoredIDsAreSafe(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	dir := t.TempDir()
	var jsonl, bib strings.Builder
	type rec struct{ key, file string }
	var keys []rec
	for i := range 300 {
		doi := "10." + fmt.Sprint(1000+rng.Intn(9000)) + "/" + hostileString(rng, 1+rng.Intn(12))
		if rng.Intn(5) == 0 {
			doi = hostileString(rng, 1+rng.Intn(12)) // not even DOI-shaped
		}
		key := hostileString(rng, 1+rng.Intn(10))
		if rng.Intn(20) == 0 {
			key = strings.Repeat("k", corpus.MaxIDLen+5) // too long for an alias
		}
		item := fmt.Sprintf(`{"id":"%s","title":"Paper %d","DOI":"%s"}`, jsonEscapeRaw(key), i, jsonEscapeRaw(doi))
		jsonl.WriteString(item + "\n")
		keys = append(keys, rec{key, "ids.jsonl"})
		// BibTeX keys stop at , and white space; braces and quotes are not
		// allowed in them.
		bkey := strings.Map(func(r rune) rune {
			if strings.ContainsRune(", \t\n{}\"=#()%", r) || r < ' ' {
				return 'x'
			}
			return r
		}, key)
		fmt.Fprintf(&bib, "@article{%s,\n  title = {Bib paper %d},\n  doi = {%s}\n}\n\n", bkey, i,
			strings.NewReplacer("{", "", "}", "", "\n", " ").Replace(doi))
		keys = append(keys, rec{bkey, "ids.bib"})
	}
	jpath, bpath := filepath.Join(dir, "ids.jsonl"), filepath.Join(dir, "ids.bib")
	require.NoError(t, os.WriteFile(jpath, []byte(jsonl.String()), 0o644))
	require.NoError(t, os.WriteFile(bpath, []byte(bib.String()), 0o644))

	s, path := openStore(t)
	for _, f := range []string{jpath, bpath} {
		var recs []corpus.Record
		require.NoError(t, corpus.ReadFile(t.Context(), f, func(r corpus.Record) error {
			recs = append(recs, r)
			return nil
		}, func(pe *corpus.ParseError) { t.Logf("skipped: %v", pe) }))
		require.NotEmpty(t, recs)
		_, err := s.Ingest(t.Context(), recs)
		require.NoError(t, err)
	}

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var ids []string
	for _, q := range []string{"SELECT id FROM papers", "SELECT alias FROM aliases", "SELECT id FROM aliases"} {
		rows, err := db.Query(q)
		require.NoError(t, err)
		for rows.Next() {
			var id string
			require.NoError(t, rows.Scan(&id))
			ids = append(ids, id)
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	require.Greater(t, len(ids), 300)
	for _, id := range ids {
		assert.True(t, corpus.ValidID(id), "stored ID or alias %q is not a safe ID", id)
		for _, b := range placeholderBreakers {
			assert.NotContains(t, id, b)
		}
	}

	// Every key still names its paper: as written, and as its safe form.
	found := 0
	considered := 0
	for _, k := range keys {
		if k.key == "" || !utf8.ValidString(k.key) || len(corpus.EscapeID(k.key)) > corpus.MaxIDLen {
			continue // invalid UTF-8 is replaced on reading; too long: no alias
		}
		considered++
		got, err := s.Resolve(t.Context(), []string{k.key, corpus.EscapeID(k.key)})
		require.NoError(t, err)
		if id, ok := got[k.key]; ok {
			found++
			assert.Equal(t, id, got[corpus.EscapeID(k.key)], "key %q", k.key)
		} else {
			t.Logf("unresolved %s %q", k.file, k.key)
		}
	}
	// Keys that collide with another record's key or ID name that one
	// (a KeyConflict); the others all resolve.
	t.Logf("keys resolved: %d of %d", found, considered)
	assert.Greater(t, found, considered*9/10, "keys resolved: %d of %d", found, considered)
}

// jsonEscapeRaw writes s as the inside of a JSON string byte by byte, so
// that invalid UTF-8 reaches the reader.
func jsonEscapeRaw(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
