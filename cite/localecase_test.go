package cite_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLanguageCaseMapping renders Turkish, Azerbaijani and Greek items
// (the item's language is what citeproc-js hands toLocaleUpperCase and
// toLocaleLowerCase) beside English and German ones holding the same
// letters, in a minimal style for each text-case value and in three
// built-in styles, and requires the dotted and dotless i of each Turkic
// language, Greek capitals without accents, and, when node is installed,
// exactly what citeproc-js prints on Node.js. goja ignored the locale:
// "istanbul" in a Turkish item came out "ISTANBUL" in upper case, not
// "İSTANBUL", and "Istanbul" when capitalised; a Greek title in upper
// case kept its accents ("Η ΙΣΤΟΡΊΑ" for "Η ΙΣΤΟΡΙΑ") and a capitalised
// word its tonos ("Άυλος" for "Αυλος") (cite/csl/jscase.go, icucase.go).
func TestLanguageCaseMapping(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine driving goja, which the race detector slows about tenfold: make test runs it without -race, in its second pass (LONG_TESTS)")
	}
	items := []json.RawMessage{
		json.RawMessage(`{"id":"tr","type":"book","language":"tr","title":"istanbul'da ilk ıslak imza: Işık ve İnci","author":[{"family":"Işık","given":"İlker"}],"publisher":"İletişim","publisher-place":"İstanbul","issued":{"date-parts":[[2019]]}}`),
		json.RawMessage(`{"id":"trTR","type":"article-journal","language":"tr-TR","title":"bilgi erişiminde istatistik","container-title":"bilişim dergisi","author":[{"family":"Yıldız","given":"Irmak"}],"volume":"4","page":"1-9","issued":{"date-parts":[[2021]]}}`),
		json.RawMessage(`{"id":"az","type":"book","language":"az","title":"azərbaycan dili: ilk dərslik","author":[{"family":"İsmayılov","given":"İlham"}],"publisher":"Elm","issued":{"date-parts":[[2015]]}}`),
		json.RawMessage(`{"id":"en","type":"book","language":"en","title":"istanbul in history: Işık and İnci","author":[{"family":"Smith","given":"Ian"}],"publisher":"Ink Press","issued":{"date-parts":[[2010]]}}`),
		json.RawMessage(`{"id":"de","type":"book","language":"de","title":"istanbul in der geschichte","author":[{"family":"İnce","given":"Ida"}],"publisher":"Insel","issued":{"date-parts":[[2012]]}}`),
		json.RawMessage(`{"id":"el","type":"book","language":"el","title":"Η ιστορία της νεότερης Ελλάδας: άυλος πολιτισμός ή μουσεία; Προϊόντα του Μαΐου","author":[{"family":"Παπαδόπουλος","given":"Γεώργιος"},{"family":"Οικονόμου","given":"Ελένη"}],"publisher":"Εκδόσεις Πατάκη","publisher-place":"Αθήνα","issued":{"date-parts":[[2018]]}}`),
		json.RawMessage(`{"id":"elGR","type":"article-journal","language":"el-GR","title":"ή η ανάκτηση πληροφοριών ή όχι","container-title":"Επιθεώρηση Κοινωνικών Ερευνών","author":[{"family":"Ἀθανασίου","given":"Ἑλένη"}],"volume":"12","page":"5-19","issued":{"date-parts":[[2020]]}}`),
		json.RawMessage(`{"id":"enGreek","type":"book","language":"en","title":"Η ιστορία της Ελλάδας","author":[{"family":"Παπαδόπουλος","given":"Γεώργιος"}],"publisher":"Άλφα","issued":{"date-parts":[[2011]]}}`),
	}
	doc := citeEach(t, items)
	layout := func(tc string) string {
		return fmt.Sprintf(`<names variable="author" text-case=%q/><text variable="title" text-case=%q prefix=" "/><text variable="publisher" text-case=%q prefix=" "/>`, tc, tc, tc)
	}
	eng, names, sts, nodeRes, nodeWhat := textCaseStyles(t, t.TempDir(), []string{"apa", "mla", "chicago"},
		[]string{"uppercase", "lowercase", "title", "capitalize-first", "capitalize-all", "sentence"}, layout, doc)
	// what each minimal style must print, per item
	want := map[string]map[string][]string{
		"case-uppercase.csl": {
			"tr":      {"İSTANBUL’DA İLK ISLAK İMZA: IŞIK VE İNCİ", "İLETİŞİM"},
			"trTR":    {"BİLGİ ERİŞİMİNDE İSTATİSTİK"},
			"az":      {"AZƏRBAYCAN DİLİ: İLK DƏRSLİK"},
			"en":      {"ISTANBUL IN HISTORY: IŞIK AND İNCI", "INK PRESS"},
			"de":      {"ISTANBUL IN DER GESCHICHTE", "INSEL"},
			"el":      {"Η ΙΣΤΟΡΙΑ ΤΗΣ ΝΕΟΤΕΡΗΣ ΕΛΛΑΔΑΣ: ΑΫΛΟΣ ΠΟΛΙΤΙΣΜΟΣ Ή ΜΟΥΣΕΙΑ; ΠΡΟΪΟΝΤΑ ΤΟΥ ΜΑΪΟΥ", "ΕΚΔΟΣΕΙΣ ΠΑΤΑΚΗ"},
			"elGR":    {"Ή Η ΑΝΑΚΤΗΣΗ ΠΛΗΡΟΦΟΡΙΩΝ Ή ΟΧΙ"},
			"enGreek": {"Η ΙΣΤΟΡΊΑ ΤΗΣ ΕΛΛΆΔΑΣ", "ΆΛΦΑ"},
		},
		"case-capitalize-all.csl": {
			"el":   {"Αυλος Πολιτισμός ή Μουσεία"},
			"elGR": {"Ανάκτηση Πληροφοριών ή Οχι"},
		},
		"case-lowercase.csl": {
			"tr": {"istanbul’da ilk ıslak imza: ışık ve inci", "iletişim"},
			"en": {"istanbul in history: işık and i̇nci", "ink press"},
		},
	}
	for i, st := range sts {
		name := filepath.Base(names[i])
		t.Run(name, func(t *testing.T) {
			out, err := eng.Render(t.Context(), st, doc)
			require.NoError(t, err)
			for _, e := range out.Entries {
				for _, s := range want[name][e.ID] {
					assert.Contains(t, string(e.Text), s, "entry %s", e.ID)
				}
			}
			if nodeRes != nil {
				_, _, _, _, diffs := compareNode(out, nodeRes[i])
				assert.Empty(t, diffs, "citefind's rendering differs from citeproc-js's on %s", nodeWhat)
			}
		})
	}
}
