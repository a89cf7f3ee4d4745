#!/usr/bin/env bash
# Sweep BM25 parameters on ACM-CR with the CLI's tuning flags and print one
# line per setting: k1 b k3 field-weights, then recall@10 ndcg@10 recall@100
# for contexts and sentences.
# Usage: benchmarks/sweep-bm25.sh DB "K1S" "BS" "K3S" "WEIGHTS..."
# e.g. benchmarks/sweep-bm25.sh .cache/bench/acm-cr "1.2 2" "0.65 0.75" "0 1" "text=1 text=1,title=0.5"
set -euo pipefail
cd "$(dirname "$0")/.."
db=$1; k1s=$2; bs=$3; k3s=$4; ws=$5
printf '%-5s %-5s %-5s %-24s | %-20s | %-20s\n' k1 b k3 weights "contexts r10 n10 r100" "sentences r10 n10 r100"
for k1 in $k1s; do for b in $bs; do for k3 in $k3s; do for w in $ws; do
  bin/citefind eval --bench acm-cr --db "$db" --quiet --json --bm25-k1 "$k1" --bm25-b "$b" --bm25-k3 "$k3" --field-weights "$w" |
  /usr/bin/python3 -c '
import json,sys
rep=json.load(sys.stdin); k1,b,k3,w=sys.argv[1:5]
cells=[]
for s in rep:
    m=s["metrics"]; cells.append("%.4f %.4f %.4f" % (m["recall@10"], m["ndcg@10"], m["recall@100"]))
print("%-5s %-5s %-5s %-24s | %s | %s" % (k1,b,k3,w,cells[0],cells[1]))' "$k1" "$b" "$k3" "$w"
done; done; done; done
