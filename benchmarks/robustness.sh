#!/usr/bin/env bash
# Feeds citefind bad inputs through the CLI and prints, for each, the command,
# its exit status, its messages and what the database holds afterwards.
# Usage: benchmarks/robustness.sh [BIN]   (docs/robustness.md records a run)
set -u
BIN=$(realpath "${1:-bin/citefind}")
W=$(mktemp -d /tmp/citefind-robust.XXXXXX)
trap 'umount "$W/full" 2>/dev/null; rm -rf "$W"' EXIT
cd "$W"
good() { # good KEY DOI TITLE
  printf '@article{%s,\n  title = {%s},\n  author = {Doe, Jane},\n  year = {2020},\n  doi = {%s},\n}\n\n' "$1" "$3" "$2"
}
run() { # run NAME CMD...
  echo "### $1"
  shift
  echo "\$ ${*/#$BIN/citefind}"
  "$@" >out.txt 2>err.txt
  local rc=$?
  sed 's/^/    /' err.txt | grep -v '^\s*$' | head -8
  grep -E 'records read|papers stored|skipped|bm25 index|removed|in agreement|out of date' out.txt | sed 's/^/    /'
  echo "    exit status $rc"
  echo
}
status() { "$BIN" status --db "$1" | sed 's/^/    status: /'; echo; }

mkdir -p in
{ good ok1 10.1/ok1 "A good paper"; good ok2 10.1/ok2 "Another good paper"; } > in/good.bib

# 1. truncated file: the last entry cut in the middle
{ good t1 10.1/t1 "Before the cut"; printf '@article{t2,\n  title = {Cut in the mid'; } > in/truncated.bib
run "truncated BibTeX" "$BIN" index --quiet --db db1 in/good.bib in/truncated.bib
status db1

# 2. invalid UTF-8 in a title and a whole line of Latin-1
{ good u1 10.1/u1 $'Caf\xe9 and na\xefve \xff\xfe bytes'; good u2 10.1/u2 "Fine"; } > in/latin1.bib
run "invalid UTF-8" "$BIN" index --quiet --db db2 in/latin1.bib
"$BIN" query --db db2 --json -k 1 "bytes" | head -c 300; echo; echo

# 3. binary file with a supported extension
head -c 200000 /dev/urandom > in/binary.bib
head -c 200000 /dev/urandom > in/binary.jsonl
run "binary file" "$BIN" index --quiet --db db3 in/binary.bib in/binary.jsonl in/good.bib
status db3

# 4. a 10 MB field
{ printf '@article{big,\n  title = {Big abstract},\n  doi = {10.1/big},\n  abstract = {'; head -c 10000000 /dev/zero | tr '\0' 'x' | fold -w 80 | tr '\n' ' '; printf '},\n}\n'; good after 10.1/after "After the big one"; } > in/big.bib
run "10 MB field" "$BIN" index --quiet --db db4 in/big.bib
status db4

# 5. deeply nested braces (100 000 levels) and an unclosed one
{ printf '@article{deep, title = {'; printf '{%.0s' $(seq 100000); printf 'x'; printf '}%.0s' $(seq 100000); printf '}, doi = {10.1/deep}}\n'; printf '@article{open, title = {{{{never closed}\n'; good ok3 10.1/ok3 "Survivor"; } > in/deep.bib
run "deeply nested braces" "$BIN" index --quiet --db db5 in/deep.bib
status db5

# 6. empty files
: > in/empty.bib; : > in/empty.jsonl; echo '[]' > in/empty.json
run "empty files" "$BIN" index --quiet --db db6 in/empty.bib in/empty.jsonl in/empty.json
status db6

# 7. wrong extensions: BibTeX named .json, JSON named .bib, an unknown one
cp in/good.bib in/bibtex-named.json
echo '{"id":"j1","title":"JSON in a bib file","DOI":"10.1/j1"}' > in/json-named.bib
cp in/good.bib in/refs.txt
run "wrong extensions" "$BIN" index --quiet --db db7 in/bibtex-named.json in/json-named.bib in/refs.txt
status db7

# 8. duplicate IDs with conflicting fields, in one file and across files
{ good d1 10.1/dup "First title"; good d2 10.1/dup "Second title"; good d1 10.1/other "Same key, other paper"; } > in/dup1.bib
printf '{"id":"d3","title":"Third title","DOI":"10.1/dup","abstract":"only here"}\n' > in/dup2.jsonl
run "duplicate IDs, conflicting fields" "$BIN" index --quiet --db db8 in/dup1.bib in/dup2.jsonl
"$BIN" query --db db8 --json -k 3 "title" | head -c 600; echo; echo

# 9. full disk: the database on a 4 MB tmpfs, filled up while indexing
mkdir -p full
if mount -t tmpfs -o size=4m tmpfs full 2>/dev/null; then
  for i in $(seq 1 4000); do good "f$i" "10.1/f$i" "Filler paper number $i with some words in the title"; done > in/many.bib
  run "full disk: first index (fits)" "$BIN" index --quiet --db full/db in/good.bib
  head -c 3500000 /dev/zero > full/filler 2>/dev/null
  df -k full | tail -1 | awk '{print "    disk: " $4 " KB free"}'
  run "full disk: index 4000 more records" "$BIN" index --quiet --db full/db in/many.bib
  status full/db
  run "full disk: query still works" "$BIN" query --db full/db -k 1 "good paper"
  rm -f full/filler
  run "full disk: space freed, same command again" "$BIN" index --quiet --db full/db in/many.bib
  status full/db
  mount -o remount,size=32m full
  run "full disk: tmpfs grown to 32 MB, same command again" "$BIN" index --quiet --db full/db in/many.bib
  status full/db
  umount full
else
  echo "### full disk: cannot mount a tmpfs here (not root?); skipped"
fi
echo

# 10. a second writer while one is running, and a query meanwhile
"$BIN" index --quiet --db db10 in/good.bib >/dev/null
for i in $(seq 1 20000); do good "w$i" "10.1/w$i" "Writer test paper $i"; done > in/writer.bib
"$BIN" index --quiet --db db10 in/writer.bib >/dev/null 2>&1 &
sleep 0.5
run "second writer, --wait 1s" "$BIN" index --quiet --wait 1s --db db10 in/good.bib
run "query while writing" "$BIN" query --db db10 -k 1 "good paper"
wait
run "second writer after the first finished" "$BIN" index --quiet --db db10 in/good.bib
status db10
