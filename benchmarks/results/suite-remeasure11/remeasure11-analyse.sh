#!/bin/bash
cd /work/wt-remeasure11
P=/work/main/.venv/bin/python; R=benchmarks/results/suite-remeasure11; D=benchmarks/results/suite-dpmmaim
DPMM="--dpmm benchmarks/results/suite-issue24-main/runs.jsonl --dpmm benchmarks/results/suite-dpmmruns/runs.jsonl \
  --dpmm $D/runs.jsonl --dpmm $D/default-more/runs.jsonl --dpmm $D/hhs-more/runs.jsonl --dpmm $D/stream-b/runs.jsonl \
  --dpmm $D/bikeshare-long/runs.jsonl --dpmm $D/college-more/runs.jsonl"
$P benchmarks/issue24_targets.py $R/runs.jsonl $DPMM --dpmm-detail \
    --before benchmarks/results/suite-remeasure10/runs.jsonl --where 3 --spreads > $R/targets.md
# lists: the list runs (safe) beside this section's data-read runs of the two tables
$P benchmarks/issue24_targets.py <(cat $R/lists/runs.jsonl; grep '"schema_mode": "draft"' $R/runs.jsonl | grep -E '"table": "(hhs_breaches|loans)"') \
    $DPMM --dpmm-detail --spreads \
    --before benchmarks/results/suite-remeasure10/lists/runs.jsonl > $R/lists/targets.md
{ for d in safe draft; do PYTHONPATH=. $P benchmarks/vs_dpmm.py $R/runs.jsonl $DPMM --draft $d --recipe aim; echo; done
  PYTHONPATH=. $P benchmarks/vs_dpmm.py $R/lists/runs.jsonl $DPMM --draft safe --recipe aim; echo
  PYTHONPATH=. $P benchmarks/vs_dpmm.py $R/lists/runs.jsonl $DPMM --columns hhs_breaches; } > $R/margins.md

# before -> after per table and draft with Welch 95 % intervals (remeasure11-compare.py)
$P $R/remeasure11-compare.py benchmarks/results/suite-remeasure10/runs.jsonl $R/runs.jsonl > $R/compare.md
$P $R/remeasure11-compare.py benchmarks/results/suite-remeasure10/lists/runs.jsonl $R/lists/runs.jsonl > $R/lists/compare.md
