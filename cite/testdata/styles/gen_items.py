#!/usr/bin/env python3
"""Generates items.json: SYNTHETIC test records for the citation-style tests.

These are invented records (fictional authors, titles, venues, DOIs under the
test prefix 10.5555) shaped like real bibliographic data. They are not claims
about any real publication. Deterministic: same output on every run.
"""
import json, random

rng = random.Random(20240605)
families = ["Smith", "Nguyen", "García", "Müller", "O'Brien", "Østergaard", "Kowalczyk", "Tanaka",
            "Ahmed", "Dubois", "Rossi", "Ivanova", "Chen", "Papadopoulos", "Johansson", "Zhang",
            "Li", "Fernández", "van der Berg", "Okafor", "Šimić", "Lefèvre", "Kim", "Patel", "Brown"]
givens = ["Anna", "Jean-Luc", "María José", "Jörg", "Siobhan", "Søren", "Zofia", "Haruki", "Fatima",
          "Élodie", "Marco", "Irina", "Wei", "Nikos", "Lars", "Yu", "Ming", "Lucía", "Pieter",
          "Chinedu", "Ivana", "Amélie", "Min-jun", "Ravi", "Thomas J."]
topics = ["Sparse Retrieval", "Dense Passage Encoders", "Citation Recommendation", "Query Reformulation",
          "Rank Fusion", "Learned Reranking", "Neural Topic Models", "Scholarly Knowledge Graphs",
          "Cross-Lingual Search", "Zero-Shot Evaluation", "Document Expansion", "Hybrid Indexing"]
patterns = ["A Study of {t}", "{t} for Scientific Literature", "Revisiting {t}: An Empirical Analysis",
            "On the Limits of {t}", "{t} at Scale", "Towards Robust {t}", "Efficient {t} with Small Models",
            "What Makes {t} Work?", "Benchmarking {t} in the Wild", "{t} Without Supervision"]
journals = [("Journal of Information Retrieval Research", "12", "3"), ("Transactions on Synthetic Systems", "7", "1"),
            ("Information Processing Letters in Test", "45", "2"), ("Data Science Review", "3", "4")]
confs = ["Proceedings of the Synthetic Conference on Retrieval", "Proceedings of the Workshop on Test Data",
         "Proceedings of the International Symposium on Imaginary Systems"]
publishers = ["Example Press", "Fictional University Press", "Placeholder Publishing"]

def person(i):
    return {"family": families[i % len(families)], "given": givens[(i * 7) % len(givens)]}

def authors(n, start):
    return [person(start + k) for k in range(n)]

def title(i):
    return patterns[i % len(patterns)].format(t=topics[(i * 5) % len(topics)])

items = []
def add(**kw):
    kw["id"] = "item%02d" % (len(items) + 1)
    items.append({k: v for k, v in kw.items() if v not in (None, "", [])})

nauth = [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 21, 1, 2, 3, 4]
# 16 journal articles
for i in range(16):
    j = journals[i % len(journals)]
    add(type="article-journal", title=title(i), author=authors(nauth[i], i * 3),
        issued={"date-parts": [[2010 + i % 12]]}, **{"container-title": j[0]}, volume=j[1],
        issue=j[2] if i % 3 else None, page="%d–%d" % (10 + i * 7, 19 + i * 9) if i % 5 else None,
        DOI="10.5555/jirr.%d" % (1000 + i) if i % 2 == 0 else None)
# 12 conference papers
for i in range(12):
    add(type="paper-conference", title=title(i + 3), author=authors(1 + (i * 2) % 9, i * 5 + 1),
        issued={"date-parts": [[2015 + i % 9]]}, **{"container-title": confs[i % len(confs)]},
        page="%d–%d" % (100 + i * 11, 108 + i * 11) if i % 4 else None,
        publisher=publishers[i % 3] if i % 3 == 0 else None,
        DOI="10.5555/conf.%d" % (200 + i) if i % 3 != 1 else None)
# 8 preprints
for i in range(8):
    aid = "23%02d.%05d" % (1 + i, 1234 + i * 111)
    add(type="article", title=title(i + 6), author=authors(1 + i % 6, i * 4 + 2),
        issued={"date-parts": [[2019 + i % 5]]}, **{"container-title": "arXiv"},
        URL="https://arxiv.org/abs/" + aid, arxiv=aid)
# 7 books
for i in range(7):
    add(type="book", title="The Handbook of " + topics[i], author=authors(1 + i % 3, i * 6 + 3),
        issued={"date-parts": [[2000 + i * 3]]}, publisher=publishers[i % 3],
        DOI="10.5555/book.%d" % i if i % 2 else None)
# 6 chapters
for i in range(6):
    add(type="chapter", title="Chapter on " + topics[i + 3], author=authors(1 + i % 2, i * 2 + 5),
        issued={"date-parts": [[2012 + i]]}, **{"container-title": "The Handbook of " + topics[i]},
        publisher=publishers[i % 3], page="%d–%d" % (33 + i * 20, 50 + i * 20))
# 5 theses
for i in range(5):
    add(type="thesis", title=title(i + 1) + " (Doctoral Dissertation Draft)" if i == 4 else title(i + 1),
        author=authors(1, i * 9 + 4), issued={"date-parts": [[2016 + i]]},
        publisher=["University of Testing", "Université de l’Exemple", "Technische Universität Beispiel"][i % 3])
# 6 web pages
for i in range(6):
    add(type="webpage", title=["Guidelines for " + topics[i], "About " + topics[i]][i % 2],
        author=authors(1, i * 3 + 7) if i % 2 == 0 else [{"literal": "Example Research Consortium"}],
        issued={"date-parts": [[2021 + i % 3]]} if i != 3 else None,
        **{"container-title": "Example Blog" if i % 3 == 0 else None},
        URL="https://example.org/page/%d" % i)
# Edge cases, hand-written.
add(type="report", title="Annual Report on Test Collections", author=[{"literal": "World Test Organization"}],
    issued={"date-parts": [[2020]]}, publisher="World Test Organization")
add(type="article-journal", title="A Paper Without a Year", author=authors(2, 40),
    **{"container-title": "Data Science Review"}, volume="4")
add(type="article-journal", title="Anonymous Findings on Retrieval", issued={"date-parts": [[2018]]},
    **{"container-title": "Journal of Information Retrieval Research"}, volume="9", issue="1", page="1–9")
add(type="paper-conference", title="Twenty-Five Authors Walk into a Benchmark", author=authors(25, 0),
    issued={"date-parts": [[2022]]}, **{"container-title": confs[0]}, page="1–12", DOI="10.5555/conf.999")
# Same first author and year: disambiguation (2020a, 2020b).
add(type="article-journal", title="Alpha Results on Rank Fusion", author=[{"family": "Hoffmann", "given": "Karl"}],
    issued={"date-parts": [[2020]]}, **{"container-title": "Data Science Review"}, volume="3", issue="1", page="1–10")
add(type="article-journal", title="Beta Results on Rank Fusion", author=[{"family": "Hoffmann", "given": "Karl"}],
    issued={"date-parts": [[2020]]}, **{"container-title": "Data Science Review"}, volume="3", issue="2", page="11–20")
add(type="article-journal", title="lower-case title: a study of case", author=[{"family": "Ng", "given": "Ho"}],
    issued={"date-parts": [[2011]]}, **{"container-title": "Data Science Review"}, volume="1", page="5–6")
add(type="book", title="Zürich Lectures on Ranking", author=[{"family": "Ørsted", "given": "Åse"}, {"family": "Łukasiewicz", "given": "Jan"}],
    issued={"date-parts": [[1999]]}, publisher="Example Press")
print(json.dumps(items, ensure_ascii=False, indent=1))
print(len(items), file=__import__("sys").stderr)
