#!/bin/bash
# autolist analysis: remeasure10's, the safe-draft runs before (main f492ab9) and after (autolist)
# beside remeasure10's data-read runs of the two tables; dpmm = remeasure9's eight files
cd /work/wt-autolist
P=/work/main/.venv/bin/python; R=benchmarks/results/autolist; D=benchmarks/results/suite-dpmmaim
R10=benchmarks/results/suite-remeasure10/runs.jsonl
DPMM="--dpmm benchmarks/results/suite-issue24-main/runs.jsonl --dpmm benchmarks/results/suite-dpmmruns/runs.jsonl \
  --dpmm $D/runs.jsonl --dpmm $D/default-more/runs.jsonl --dpmm $D/hhs-more/runs.jsonl --dpmm $D/stream-b/runs.jsonl \
  --dpmm $D/bikeshare-long/runs.jsonl --dpmm $D/college-more/runs.jsonl"
$P benchmarks/issue24_targets.py <(cat $R/after/runs.jsonl; grep '"schema_mode": "draft"' $R10 | grep -E '"table": "(hhs_breaches|loans)"') \
    $DPMM --dpmm-detail --spreads --before $R/before/runs.jsonl > $R/targets.md
{ for s in before after; do echo "### $s"; PYTHONPATH=. $P benchmarks/vs_dpmm.py $R/$s/runs.jsonl $DPMM --draft safe --recipe aim; echo
  PYTHONPATH=. $P benchmarks/vs_dpmm.py $R/$s/runs.jsonl $DPMM --columns hhs_breaches; echo; done; } > $R/margins.md
