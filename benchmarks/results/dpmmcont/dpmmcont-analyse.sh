#!/bin/bash
# score every dpmm run that finished, then targets, Welch margins and per-column distances
cd /work/wt-dpmmcont
C=/tmp/dpmmcont-cache; P=/work/main/.venv/bin/python; R=benchmarks/results/dpmmcont
export PYTHONPATH=.
rm -rf $R/dpmm && for d in mst mst-c privbayes-b; do
  [ -f /tmp/dpmmcont-runs/dpmm-$d/runs.jsonl ] && \
    nice -n 10 $P benchmarks/suite.py --score-dpmm /tmp/dpmmcont-runs/dpmm-$d --cache $C --out $R/dpmm
done
DPMM="--dpmm $R/dpmm/runs.jsonl"
$P benchmarks/issue24_targets.py $R/ours/runs.jsonl $DPMM --dpmm-detail --spreads > $R/targets.md
{ for d in safe draft; do $P benchmarks/vs_dpmm.py $R/ours/runs.jsonl $DPMM --draft $d --recipe aim; done
  for t in oj smarket boston carseats; do $P benchmarks/vs_dpmm.py $R/ours/runs.jsonl $DPMM --columns $t; done; } > $R/margins.md
