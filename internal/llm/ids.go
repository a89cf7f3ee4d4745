package llm

import (
	"math/rand/v2"
	"strings"
)

// idLetters are the letters of candidate IDs: consonants only, without Y,
// so that an ID is never a word a model would read as content, and
// without letters easily confused with digits (no vowels means no O/I).
const idLetters = "BCDFGHJKLMNPQRSTVWXZ"

// idStopList holds the consonant-only strings that are words or
// interjections anyway.
var idStopList = map[string]bool{
	"PSST": true, "PFFT": true, "HMMM": true, "BRRR": true, "GRRR": true,
	"SHHH": true, "TSKS": true, "CWMS": true, "PHPH": true, "HTML": true,
	"HTTP": true, "JPEG": true, "NCBI": true, "MSDN": true,
}

// IDLen is the length of the IDs made by RandomIDs.
const IDLen = 4

// RandomIDs returns n distinct random IDs of IDLen upper-case consonants
// (e.g. "KDTQ"), the handles under which candidates are shown to a model.
// Random letters, unlike sequential numbers, give a model no pattern to
// extend with made-up candidates. With seed 0 the IDs differ on every
// call; any other seed makes them a fixed function of (seed, n).
func RandomIDs(n int, seed uint64) []string {
	var r *rand.Rand
	if seed == 0 {
		r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	} else {
		r = rand.New(rand.NewPCG(seed, 0x6369746566696e64)) // "citefind"
	}
	ids := make([]string, 0, n)
	seen := make(map[string]bool, n)
	var b [IDLen]byte
	for len(ids) < n {
		for i := range b {
			b[i] = idLetters[r.IntN(len(idLetters))]
		}
		id := string(b[:])
		if seen[id] || idStopList[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids
}

// NormalizeID turns a model's spelling of an ID into the canonical form:
// surrounding space, quotes, brackets, "#" and "ID" prefixes removed,
// upper case. "[kdtq]", " ID: KDTQ" and "#KDTQ" all become "KDTQ".
func NormalizeID(s string) string {
	trim := func(s string) string {
		for {
			t := s
			for _, cut := range []string{" ", "\t", "\n", "\r", `"`, "'", "`", "[", "]", "(", ")", "<", ">", "#", ":", ".", ",", "*"} {
				for len(t) >= len(cut) && t[:len(cut)] == cut {
					t = t[len(cut):]
				}
				for len(t) >= len(cut) && t[len(t)-len(cut):] == cut {
					t = t[:len(t)-len(cut)]
				}
			}
			if t == s {
				return t
			}
			s = t
		}
	}
	s = trim(s)
	if len(s) > 2 && (s[:2] == "ID" || s[:2] == "id" || s[:2] == "Id") && len(s) > IDLen {
		s = trim(s[2:])
	}
	out := []byte(s)
	for i, c := range out {
		if c >= 'a' && c <= 'z' {
			out[i] = c - 'a' + 'A'
		}
	}
	return string(out)
}

// LooksLikeID reports whether w is written like an ID: IDLen upper-case
// letters of the ID alphabet, so that prose words ("rank", "JSON") are
// not taken for IDs when a reply is salvaged.
func LooksLikeID(w string) bool {
	if len(w) != IDLen {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !strings.ContainsRune(idLetters, rune(w[i])) {
			return false
		}
	}
	return true
}
