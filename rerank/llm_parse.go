package rerank

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/citefind/citefind/internal/llm"
)

// Ranking is a parsed model reply to the rerank prompt.
type Ranking struct {
	// Order holds indices into the shown IDs: first the ones the model
	// ranked, in its order, then the ones it left out, in the order shown.
	// It is empty when the reply is unusable (see Failure).
	Order []int
	// Ranked is how many leading entries of Order the model ranked.
	Ranked int
	// Unknown counts entries that named no shown ID: made-up IDs, numbers
	// and anything else that is not an ID.
	Unknown int
	// Numbers counts the entries that were numbers (included in Unknown).
	Numbers int
	// Duplicates counts repeated IDs (each keeps its first place).
	Duplicates int
	// Salvaged is true when the reply held no usable JSON and the IDs
	// were read from the text in order of appearance.
	Salvaged bool
	// Failure says why Order is empty.
	Failure string
	// Warnings describe every repair made.
	Warnings []string
}

// rankingKeys are the object keys under which a model may put its list,
// in order of preference; "ranking" is the one the prompt asks for.
var rankingKeys = []string{"ranking", "ranked", "rank", "order", "ids", "candidates", "result", "results"}

// rankingList returns the list inside a reply value: a bare array, or the
// array under one of rankingKeys (else the only array-valued field).
func rankingList(raw json.RawMessage) ([]json.RawMessage, bool) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		return list, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	for _, k := range rankingKeys {
		if v, ok := obj[k]; ok && json.Unmarshal(v, &list) == nil {
			return list, true
		}
	}
	var found []json.RawMessage
	n := 0
	for _, v := range obj {
		var l []json.RawMessage
		if json.Unmarshal(v, &l) == nil {
			found, n = l, n+1
		}
	}
	return found, n == 1
}

// ParseRanking reads a model's reply to the rerank prompt, whose
// candidates were shown under ids. Rules:
//
//   - The JSON may be bare, in a code fence or inside prose (ExtractJSON).
//     It may be {"ranking": [...]} (or another key, see rankingKeys) or
//     a bare array.
//   - Entries are matched to ids after NormalizeID ("[kdtq]" is "KDTQ");
//     an object entry is read through its "id" field.
//   - A repeated ID keeps its first place; later copies are dropped.
//   - An entry naming no shown ID is ignored and counted as Unknown.
//   - Numbers are never mapped to candidates, in range or not: the prompt
//     shows no numbers, so a number is the model's invention, and whether
//     it means a 0- or 1-based position is a guess. They count as Unknown.
//   - Shown IDs the model left out follow the ranked ones in shown order.
//   - Without usable JSON (truncated output, plain text), the shown IDs
//     found as words in the text (from the first "{" or "[" when there is
//     one) are taken in order of appearance; this recovers a reply cut
//     off by a token limit.
//   - The reply is unusable (Order empty, Failure set) when it is empty
//     or names no shown ID.
func ParseRanking(reply string, ids []string) Ranking {
	var r Ranking
	if strings.TrimSpace(reply) == "" {
		r.Failure = "the model's reply was empty"
		return r
	}
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	seen := make([]bool, len(ids))
	take := func(id string) bool {
		i, ok := index[llm.NormalizeID(id)]
		if !ok {
			r.Unknown++
			return false
		}
		if seen[i] {
			r.Duplicates++
			return true
		}
		seen[i] = true
		r.Order = append(r.Order, i)
		return true
	}

	raw, ok := llm.ExtractJSON(reply, func(raw json.RawMessage) bool {
		_, ok := rankingList(raw)
		return ok
	})
	if ok {
		list, _ := rankingList(raw)
		for _, e := range list {
			var s string
			var num json.Number
			var obj struct {
				ID json.RawMessage `json:"id"`
			}
			switch {
			case json.Unmarshal(e, &s) == nil:
				if isNumber(s) {
					r.Numbers++
					r.Unknown++
					continue
				}
				take(s)
			case json.Unmarshal(e, &num) == nil:
				r.Numbers++
				r.Unknown++
			case json.Unmarshal(e, &obj) == nil && obj.ID != nil:
				if json.Unmarshal(obj.ID, &s) == nil && !isNumber(s) {
					take(s)
				} else {
					r.Numbers++
					r.Unknown++
				}
			default:
				r.Unknown++
			}
		}
	} else {
		text := reply
		if i := strings.IndexAny(text, "{["); i >= 0 {
			text = text[i:]
		}
		for _, w := range strings.FieldsFunc(text, func(c rune) bool {
			return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z')
		}) {
			if llm.LooksLikeID(w) {
				take(w)
			}
		}
		r.Salvaged = true
	}

	if len(r.Order) == 0 {
		switch {
		case r.Numbers > 0:
			r.Failure = fmt.Sprintf("the model answered with %d numbers instead of candidate IDs", r.Numbers)
		case ok:
			r.Failure = fmt.Sprintf("the model's reply named no candidate ID: %q", llm.Shorten(reply, llm.MaxShown))
		default:
			r.Failure = fmt.Sprintf("the model's reply was not JSON and named no candidate ID: %q", llm.Shorten(reply, llm.MaxShown))
		}
		r.Order = nil
		return r
	}
	r.Ranked = len(r.Order)
	for i := range ids {
		if !seen[i] {
			r.Order = append(r.Order, i)
		}
	}
	if r.Salvaged {
		r.Warnings = append(r.Warnings, fmt.Sprintf("llm rerank: the reply was not valid JSON (truncated?); read %d IDs from its text", r.Ranked))
	}
	if r.Unknown > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("llm rerank: ignored %d entries that named no candidate (%d numbers)", r.Unknown, r.Numbers))
	}
	if r.Duplicates > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("llm rerank: ignored %d repeated IDs (each kept its first place)", r.Duplicates))
	}
	return r
}

// isNumber reports whether s (trimmed) is an integer or decimal, maybe
// with a leading "#".
func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if s == "" {
		return false
	}
	digits := 0
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || (c == '-' && i == 0):
		default:
			return false
		}
	}
	return digits > 0
}
