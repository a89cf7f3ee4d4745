#!/usr/bin/env bash
# Sweep BM25 parameters on ACM-CR with the CLI's tuning flags and print one
# line per setting: k1 b field-weights, then recall@10 ndcg@10 recall@100 for
# contexts and sentences. Usage: benchmarks/sweep-bm25.sh DB "K1S" "BS" "WEIGHTS..."
# e.g. benchmarks/sweep-bm25.sh .cache/bench/acm-cr "0.9 1.2" "0.6 0.75" "text=1 text=1,title=0.5"
set -euo pipefail
cd "$(dirname "$0")/.."
db=$1; k1s=$2; bs=$3; ws=$4
printf '%-5s %-5s %-28s | %-23s | %-23s\n' k1 b weights "contexts r10 n10 r100" "sentences r10 n10 r100"
for k1 in $k1s; do for b in $bs; do for w in $ws; do
  bin/citefind eval --bench acm-cr --db "$db" --quiet --json --bm25-k1 "$k1" --bm25-b "$b" --field-weights "$w" |
  /usr/bin/python3 -c '
import json,sys
rep=json.load(sys.stdin); k1,b,w=sys.argv[1:4]
cells=[]
for s in rep:
    m=s["metrics"]; cells.append("%.4f %.4f %.4f" % (m["recall@10"], m["ndcg@10"], m["recall@100"]))
print("%-5s %-5s %-28s | %s | %s" % (k1,b,w,cells[0],cells[1]))' "$k1" "$b" "$w"
done; done; done
