package corpus_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// itemCase is one BibTeX entry (bib) and the CSL-JSON item it must give.
type itemCase struct{ name, bib, want string }

// checkItems reads each case's entry and compares its item with want.
func checkItems(t *testing.T, tests []itemCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := readBib(t, tc.bib)
			require.Empty(t, res.errs)
			require.Len(t, res.recs, 1)
			assert.JSONEq(t, tc.want, string(res.recs[0].Item))
		})
	}
}

// TestBibTeXToCSL pins the CSL-JSON item made of BibTeX entries that use
// the standard BibTeX and BibLaTeX fields (see docs/bibtex.md).
func TestBibTeXToCSL(t *testing.T) {
	tests := []itemCase{
		{"proceedings paper: editor, booktitle, series, volume, month, address, location, DOI as written, note",
			`@inproceedings{devlin2019bert,
  title = {{BERT}: Pre-training of Deep Bidirectional Transformers for Language Understanding},
  author = {Devlin, Jacob and Chang, Ming-Wei and Lee, Kenton and Toutanova, Kristina},
  editor = {Burstein, Jill and Doran, Christy and Solorio, Thamar},
  booktitle = {Proceedings of the 2019 Conference of the North {A}merican Chapter of the Association for Computational Linguistics},
  series = {NAACL '19}, volume = {1}, month = jun, year = {2019},
  address = {Minneapolis, Minnesota}, location = {Minneapolis, USA},
  publisher = {Association for Computational Linguistics},
  doi = {10.18653/v1/N19-1423}, pages = {4171--4186}, note = {Long paper},
}`,
			`{"id":"devlin2019bert","type":"paper-conference","title":"BERT: Pre-training of deep bidirectional transformers for language understanding","title-short":"BERT",
"container-title":"Proceedings of the 2019 conference of the north American chapter of the association for computational linguistics","collection-title":"NAACL ’19",
"author":[{"family":"Devlin","given":"Jacob"},{"family":"Chang","given":"Ming-Wei"},{"family":"Lee","given":"Kenton"},{"family":"Toutanova","given":"Kristina"}],
"editor":[{"family":"Burstein","given":"Jill"},{"family":"Doran","given":"Christy"},{"family":"Solorio","given":"Thamar"}],
"issued":{"date-parts":[[2019,6]]},"page":"4171-4186","volume":"1","publisher":"Association for Computational Linguistics",
"publisher-place":"Minneapolis, Minnesota","event-place":"Minneapolis, USA","DOI":"10.18653/v1/N19-1423","note":"Long paper"}`},
		{"thesis: particles, suffix, type → genre, school; howpublished → publisher, urldate → accessed, edition, chapter, number, translator",
			`@phdthesis{x, title={Learning to Rank with {XGBoost}}, author={van der Berg, Jan and Smith, Jr., John}, school={MIT}, year=2020,
  type={{PhD} dissertation}, address={Cambridge, MA}, urldate={2021-03-04}, edition={2nd}, translator={Doe, Jane}, chapter={3},
  howpublished={Online}, number={TR-5}, langid={english}}`,
			`{"id":"x","type":"thesis","genre":"PhD dissertation","language":"en-US","title":"Learning to rank with XGBoost",
"author":[{"family":"Berg","given":"Jan","dropping-particle":"van der"},{"family":"Smith","given":"John","suffix":"Jr."}],
"translator":[{"family":"Doe","given":"Jane"}],"issued":{"date-parts":[[2020]]},"accessed":{"date-parts":[[2021,3,4]]},
"chapter-number":"3","edition":"2nd","number":"TR-5","publisher":"MIT; Online","publisher-place":"Cambridge, MA"}`},
		{"arXiv preprint: eprint and archivePrefix, publisher arXiv, month and day, others dropped",
			`@misc{vaswani2017, title={Attention Is All You Need}, author={Vaswani, Ashish and others}, eprint={1706.03762},
  archivePrefix={arXiv}, primaryClass={cs.CL}, year={2017}, publisher={arXiv}, month={12}, day={5}}`,
			`{"id":"vaswani2017","type":"article","title":"Attention is all you need","author":[{"family":"Vaswani","given":"Ashish"}],
"issued":{"date-parts":[[2017,12,5]]},"publisher":"arXiv","URL":"https://arxiv.org/abs/1706.03762","arxiv":"1706.03762"}`},
		{"report: institution, number, biblatex type key, date range",
			`@techreport{tr, title={A Report}, institution={Inst}, number={42}, type={techreport}, date={1999-05-03/1999-06}}`,
			`{"id":"tr","type":"report","genre":"technical report","title":"A report","issued":{"date-parts":[[1999,5,3],[1999,6]]},"number":"42","publisher":"Inst"}`},
		{"book: German title kept as written, numeric series, volume and part, location → publisher-place",
			`@book{b, title={Über Dinge}, editor={Ed, Itor}, series={3}, volume={12}, part={2}, publisher={Springer}, location={Berlin}, year={2001}, langid={ngerman}}`,
			`{"id":"b","type":"book","language":"de-DE","title":"Über Dinge","collection-title":"3rd series","editor":[{"family":"Ed","given":"Itor"}],
"issued":{"date-parts":[[2001]]},"volume":"12.2","publisher":"Springer","publisher-place":"Berlin"}`},
		{"article: journal as written, number and issue, ISSN, circa date, translator",
			`@article{a, title={The {ACM} Way}, journaltitle={Journal of the ACM}, subtitle={A Study}, number={4}, issue={Spring}, issn={0004-5411},
  date={2020-21~}, pages={1-10}, keywords={a, b}, abstract={An <i>abstract</i> &amp; more.}}`,
			`{"id":"a","type":"article-journal","title":"The ACM way: A study","title-short":"The ACM way","container-title":"Journal of the ACM",
"issued":{"date-parts":[[2020]],"season":1,"circa":true},"page":"1-10","issue":"4, Spring","ISSN":"0004-5411",
"abstract":"An <i>abstract</i> & more.","keyword":"a, b"}`},
	}
	checkItems(t, tests)
}

// TestBibTeXSentenceCase: titles of English entries in sentence case, as
// pandoc (and CSL data) has them.
func TestBibTeXSentenceCase(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Attention Is All You Need", "Attention is all you need"},
		{"{BERT}: Pre-training of Deep Bidirectional Transformers", "BERT: Pre-training of deep bidirectional transformers"},
		{"Learning with {G}aussian Processes on the iPhone and in the USA", "Learning with Gaussian processes on the iPhone and in the USA"},
		{"Deep Learning: An Overview", "Deep learning: An overview"},
		{"Deep Learning: Overview", "Deep learning: overview"}, // pandoc lower-cases a lone last word
		{"a study of things", "A study of things"},
		{"Part A of the 3D Work. The Second Sentence", "Part a of the 3D work. The second sentence"},
		{"Open-Domain Question Answering", "Open-domain question answering"},
		{"{Open-Domain} Question Answering", "Open-Domain question answering"},
		{`A \emph{Novel} and \textsc{Big} Idea`, "A <i>novel</i> and <span style=\"font-variant:small-caps;\">Big</span> idea"},
		{"{\\em Study} of $\\alpha$-Decay", "<i>Study</i> of α-decay"},
		{"Finding `Lucy in Disguise': The Lyric", "Finding “lucy in disguise”: The lyric"},
		{"Tom's Diner", "Tom’s diner"},
		{"The Semantic Web 10<sup>th</sup> Year", "The semantic web 10<sup>th</sup> year"},
		{"<i>PieCursor</i>: Merging Pointing", "<i>PieCursor</i>: Merging pointing"},
		{"{\\\"U}ber Alles", "Über alles"},
		// The ACM export of a title in small capitals (JASIST).
		{"<b>A</b>Ssessing <b>O</b>Bliteration by <b>I</b>Ncorporation: <b>I</b>Ssues and <b>C</b>Aveats", "Assessing obliteration by incorporation: Issues and caveats"},
		{"Content Analysis of <b>Y</b>Ou<b>T</b>Ube Videos", "Content analysis of YouTube videos"},
		{"Remarks on the Paper by <b>A</b>. <b>De V</b>Isscher", "Remarks on the paper by a. De visscher"}, // as any Title Case title: pandoc's sentence case
		{"<b>L</b>Ing-<b>L</b>Ing <b>W</b>u. <b>DOI</b>: 10.1002/asi", "Ling-ling wu. DOI: 10.1002/asi"},
		// Bold that is not such an export stays bold.
		{"Revisiting <b><i>h</i></b> Measured", "Revisiting <b><i>h</i></b> measured"},
		{"Learning <b>U</b>ser-Specific Models", "Learning <b>u</b>ser-specific models"},
		{"<b>Objective</b>To Assess <b>A</b>Ssessing", "<b>Objective</b>to assess assessing"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			res := readBib(t, "@article{k, title = {"+tc.in+"}}")
			require.Len(t, res.recs, 1, "%v", res.errs)
			var item struct {
				Title string `json:"title"`
			}
			require.NoError(t, json.Unmarshal(res.recs[0].Item, &item))
			assert.Equal(t, tc.want, item.Title)
		})
	}
	res := readBib(t, "@article{k, title = {Deep Learning for Dummies}, langid = {french}}")
	require.Len(t, res.recs, 1)
	assert.Equal(t, "Deep Learning for Dummies", res.recs[0].Paper.Title, "other languages keep their case")
}

// TestBibTeXCrossref: an entry inherits the fields of the entry its
// crossref names, wherever that entry stands in the file (BibTeX wants it
// after the child, biblatex allows either), as BibTeX and biblatex do: a
// proceedings' title becomes the paper's container title, its editors,
// publisher, year, series and address the paper's; never its DOI or URL
// (every paper would be the proceedings). Records keep file order.
func TestBibTeXCrossref(t *testing.T) {
	res := readBib(t, `
@proceedings{DBLP:conf/sigir/2020,
  editor    = {Jimmy Huang and Yi Chang},
  title     = {Proceedings of the 43rd International {ACM} {SIGIR} Conference},
  publisher = {{ACM}}, address = {New York}, year = {2020}, series = {SIGIR '20},
  doi       = {10.1145/3397271}, url = {https://doi.org/10.1145/3397271}, isbn = {978-1-4503-8016-4},
}
@inproceedings{DBLP:conf/sigir/Hinton20,
  author    = {Geoffrey Hinton},
  title     = {The Next Generation of Neural Networks},
  pages     = {1}, crossref = {dblp:conf/sigir/2020},
}
@inbook{chap, author = {Ann Author}, title = {A Chapter}, pages = {5--9}, crossref = {bk}}
@book{bk, author = {Bob Book}, title = {The Book}, subtitle = {All of It}, publisher = {Press}, date = {1999}}
@article{orphan, author = {Cy Orphan}, title = {Alone}, journal = {J}, year = 2001, crossref = {missing}}
`)
	require.Empty(t, res.errs)
	require.Len(t, res.recs, 5)
	var keys []string
	for _, r := range res.recs {
		keys = append(keys, r.Key)
	}
	assert.Equal(t, []string{"DBLP:conf/sigir/2020", "DBLP:conf/sigir/Hinton20", "chap", "bk", "orphan"}, keys, "file order")
	assert.JSONEq(t, `{"id":"DBLP:conf/sigir/Hinton20","type":"paper-conference","title":"The next generation of neural networks",
"container-title":"Proceedings of the 43rd international ACM SIGIR conference","collection-title":"SIGIR ’20",
"author":[{"family":"Hinton","given":"Geoffrey"}],"editor":[{"family":"Huang","given":"Jimmy"},{"family":"Chang","given":"Yi"}],
"issued":{"date-parts":[[2020]]},"page":"1","publisher":"ACM","publisher-place":"New York","ISBN":"978-1-4503-8016-4"}`,
		string(res.recs[1].Item))
	assert.NotEqual(t, res.recs[0].Paper.ID, res.recs[1].Paper.ID, "the paper does not take the proceedings' DOI")
	assert.Empty(t, res.recs[1].Warnings)
	assert.JSONEq(t, `{"id":"chap","type":"chapter","title":"A chapter","container-title":"The book: All of it",
"author":[{"family":"Author","given":"Ann"}],"container-author":[{"family":"Book","given":"Bob"}],
"issued":{"date-parts":[[1999]]},"page":"5-9","publisher":"Press"}`, string(res.recs[2].Item))
	require.Len(t, res.recs[4].Warnings, 1)
	assert.ErrorIs(t, res.recs[4].Warnings[0], corpus.ErrCrossref)
	assert.Contains(t, res.recs[4].Warnings[0].Error(), `in.bib:`)
	assert.Contains(t, res.recs[4].Warnings[0].Error(), `crossref "missing": no entry with that key in this file`)
}

// TestBibTeXCrossrefCascade: a parent that has a crossref itself takes
// its parent's fields before its child takes them (biblatex's cascading
// crossref, as biber and pandoc read it; classic BibTeX does not cascade),
// wherever the entries stand; a chain that leads back is a warning.
func TestBibTeXCrossrefCascade(t *testing.T) {
	res := readBib(t, `@inbook{child, title = {Passio}, pages = {51-54}, crossref = {mid}}
@incollection{mid, author = {Paolo Chiesa}, title = {La versione latina}, pages = {41-54}, crossref = {top}}
@collection{top, title = {Suave mari magno}, editor = {Claudio Griggio}, publisher = {Forum}, location = {Udine}, year = {2008}}
@book{loop1, title = {One}, crossref = {loop2}}
@book{loop2, title = {Two}, crossref = {loop1}, publisher = {P}}
@book{vol, title = {Roma}, volume = {1}, crossref = {mv}}
@mvbook{mv, title = {Epigrafia}, publisher = EQ, location = {Rome}, series = {Vetera}, volumes = {7}}
`)
	require.Len(t, res.errs, 1, "the parent with an undefined macro is an error")
	assert.ErrorIs(t, res.errs[0], corpus.ErrUndefinedMacro)
	assert.Equal(t, 7, res.errs[0].Line)
	require.Len(t, res.recs, 6, "and is not stored")
	assert.JSONEq(t, `{"id":"vol","type":"book","title":"Roma","volume":"1","publisher-place":"Rome","collection-title":"Vetera","number-of-volumes":"7"}`,
		string(res.recs[5].Item), "its other fields are inherited")
	require.Len(t, res.recs[5].Warnings, 1)
	assert.Equal(t, `in.bib:6: warning: crossref "mv": the entry of line 7 is not stored (it uses the undefined @string macro "eq" in field "publisher"); this entry takes its other fields`,
		res.recs[5].Warnings[0].Error())
	assert.JSONEq(t, `{"id":"child","type":"chapter","title":"Passio","container-title":"La versione latina",
"container-author":[{"family":"Chiesa","given":"Paolo"}],"author":[{"family":"Chiesa","given":"Paolo"}],
"editor":[{"family":"Griggio","given":"Claudio"}],"issued":{"date-parts":[[2008]]},"page":"51-54","publisher":"Forum","publisher-place":"Udine"}`,
		string(res.recs[0].Item), "the grandparent's editor, publisher, place and year")
	assert.Empty(t, res.recs[0].Warnings)
	assert.JSONEq(t, `{"id":"mid","type":"chapter","title":"La versione latina","container-title":"Suave mari magno",
"author":[{"family":"Chiesa","given":"Paolo"}],"editor":[{"family":"Griggio","given":"Claudio"}],
"issued":{"date-parts":[[2008]]},"page":"41-54","publisher":"Forum","publisher-place":"Udine"}`, string(res.recs[1].Item))
	assert.JSONEq(t, `{"id":"loop1","type":"book","title":"One","publisher":"P"}`, string(res.recs[3].Item))
	assert.Empty(t, res.recs[3].Warnings)
	require.Len(t, res.recs[4].Warnings, 1)
	assert.ErrorIs(t, res.recs[4].Warnings[0], corpus.ErrCrossref)
	assert.Equal(t, `in.bib:5: warning: crossref "loop1" is circular (the entry of line 4 leads back to this one through crossref); nothing inherited from it`,
		res.recs[4].Warnings[0].Error())
}

// TestBibLaTeXXData: biblatex's @xdata entries give their fields to the
// entries whose xdata field names them (before or after them, through
// chains of @xdata entries, the entry's own fields first, a crossref
// parent passing on what it took), as pandoc does; what cannot be
// inherited (a missing or non-@xdata key, a circular chain, an @xdata
// entry with an undefined macro, a granular reference) is a warning
// naming the line, and the entry keeps the rest.
func TestBibLaTeXXData(t *testing.T) {
	res := readBib(t, `@book{b1, author = {Doe, John}, title = {A Book}, xdata = {series}, year = {1999}}
@xdata{pub,
  publisher = {Springer},
  location = {Berlin},
  year = {2001},
}
@xdata{series, xdata = {pub}, series = {LNCS}}
@book{b2, author = {Roe, Jane}, title = {Another}, xdata = { PUB , nosuch}}
@book{b3, author = {Poe, Ed}, title = {Third}, xdata = {b1}}
@xdata{loop1, xdata = {loop2}, note = {one}}
@xdata{loop2, xdata = {loop1}, edition = {2}}
@book{b4, author = {Loe, Al}, title = {Fourth}, xdata = {loop1}}
@xdata{undef, publisher = nosuchmacro, location = {Rome}}
@book{b5, author = {Zoe, Bo}, title = {Fifth}, xdata = {undef}, editor = {Smith, Ann and xdata=pub-editor-1}}
@incollection{c, author = {Coe, Cy}, title = {A Chapter}, crossref = {b1}}
`)
	require.Len(t, res.recs, 6)
	for _, e := range res.errs {
		assert.ErrorIs(t, e, corpus.ErrNotReference, "only the @xdata entries are reported: %v", e)
	}
	assert.Len(t, res.errs, 5)
	assert.JSONEq(t, `{"id":"b1","type":"book","title":"A book","author":[{"family":"Doe","given":"John"}],
"issued":{"date-parts":[[1999]]},"collection-title":"LNCS","publisher":"Springer","publisher-place":"Berlin"}`,
		string(res.recs[0].Item), "own year first; the chain series → pub")
	assert.Empty(t, res.recs[0].Warnings)

	assert.JSONEq(t, `{"id":"b2","type":"book","title":"Another","author":[{"family":"Roe","given":"Jane"}],
"issued":{"date-parts":[[2001]]},"publisher":"Springer","publisher-place":"Berlin"}`, string(res.recs[1].Item), "keys in any case")
	require.Len(t, res.recs[1].Warnings, 1)
	assert.ErrorIs(t, res.recs[1].Warnings[0], corpus.ErrXData)
	assert.Equal(t, `in.bib:8: warning: xdata "nosuch": no @xdata entry with that key in this file; nothing inherited from it`,
		res.recs[1].Warnings[0].Error())

	assert.JSONEq(t, `{"id":"b3","type":"book","title":"Third","author":[{"family":"Poe","given":"Ed"}]}`,
		string(res.recs[2].Item), "a book is no @xdata entry")
	require.Len(t, res.recs[2].Warnings, 1)
	assert.Contains(t, res.recs[2].Warnings[0].Error(), `in.bib:9: warning: xdata "b1" names the @book entry of line 1, not an @xdata entry`)

	assert.JSONEq(t, `{"id":"b4","type":"book","title":"Fourth","author":[{"family":"Loe","given":"Al"}],"note":"one","edition":"2"}`,
		string(res.recs[3].Item), "a circular chain gives what it has, once")
	require.Len(t, res.recs[3].Warnings, 1)
	assert.Contains(t, res.recs[3].Warnings[0].Error(), `in.bib:11: warning: xdata "loop1" is circular (the @xdata entry of line 10`)

	assert.JSONEq(t, `{"id":"b5","type":"book","title":"Fifth","author":[{"family":"Zoe","given":"Bo"}],
"editor":[{"family":"Smith","given":"Ann"}],"publisher-place":"Rome"}`, string(res.recs[4].Item), "the @xdata entry's good fields")
	var msgs []string
	for _, w := range res.recs[4].Warnings {
		assert.ErrorIs(t, w, corpus.ErrXData)
		msgs = append(msgs, w.Error())
	}
	assert.Equal(t, []string{
		`in.bib:14: warning: xdata "undef": the @xdata entry of line 13 uses the undefined @string macro "nosuchmacro" in field "publisher"; its other fields are inherited`,
		`in.bib:14: warning: xdata reference inside field "editor" (biber's granular xdata=KEY-FIELD) is not resolved; the name is left out`,
	}, msgs)

	assert.JSONEq(t, `{"id":"c","type":"chapter","title":"A chapter","author":[{"family":"Coe","given":"Cy"}],"container-title":"A book",
"issued":{"date-parts":[[1999]]},"collection-title":"LNCS","publisher":"Springer","publisher-place":"Berlin"}`,
		string(res.recs[5].Item), "the crossref parent passes on its xdata fields")
	assert.Empty(t, res.recs[5].Warnings)
}

// TestBibLaTeXKeys: biblatex's localisation keys (type = {patentus},
// series = {newseries}), the language variant of langidopts, the entry
// option useprefix, origyear, a chapter of one volume of a multi-volume
// work, an issue of a periodical, and a date field that is no date next
// to a year.
func TestBibLaTeXKeys(t *testing.T) {
	tests := []itemCase{
		{"patent type key, language variant",
			`@patent{p, title={A Device}, author={Sorace, Ronald}, type={patentus}, number={5668842}, date={1997-09-16}, langid={english}, langidopts={variant=british}}`,
			`{"id":"p","type":"patent","genre":"U.S. patent","language":"en-GB","title":"A device","author":[{"family":"Sorace","given":"Ronald"}],"issued":{"date-parts":[[1997,9,16]]},"number":"5668842"}`},
		{"series key, useprefix bare, origyear",
			`@book{b, title={Rites}, author={van Gennep, Arnold}, options={useprefix}, series={newseries}, year=1960, origyear=1909, publisher={Chicago}}`,
			`{"id":"b","type":"book","title":"Rites","collection-title":"New series","author":[{"family":"Gennep","given":"Arnold","non-dropping-particle":"van"}],
"issued":{"date-parts":[[1960]]},"original-date":{"date-parts":[[1909]]},"publisher":"Chicago"}`},
		{"chapter in a volume of a multi-volume work",
			`@inbook{k, title={Kritik}, author={Kant, Immanuel}, booktitle={Kritik der Urtheilskraft}, maintitle={Kants Werke}, volume=5, date=1968, langid={german}}`,
			`{"id":"k","type":"chapter","language":"de-DE","title":"Kritik","volume-title":"Kritik der Urtheilskraft","container-title":"Kants Werke",
"author":[{"family":"Kant","given":"Immanuel"}],"issued":{"date-parts":[[1968]]},"volume":"5"}`},
		{"an issue of a periodical: issuetitle is the title",
			`@periodical{jcg, title={Computers and Graphics}, issuetitle={Semantic {3D} Media and Content}, volume=35, number=4, year=2011, issn={0097-8493}}`,
			`{"id":"jcg","type":"article-journal","title":"Semantic 3D media and content","container-title":"Computers and Graphics",
"issued":{"date-parts":[[2011]]},"volume":"35","issue":"4","ISSN":"0097-8493"}`},
		{"a date field that is no date gives way to year",
			`@book{d, title={Software Tools}, year=1975, date={15/05/84}}`,
			`{"id":"d","type":"book","title":"Software tools","issued":{"date-parts":[[1975]]}}`},
	}
	checkItems(t, tests)
}
