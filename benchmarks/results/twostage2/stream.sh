#!/bin/bash
# usage: twostage2-stream.sh SHARE TAG  -- safe AIM runs, merged code snapshot /tmp/twostage2-run
S=$1; TAG=$2
cd /tmp/twostage2-run
P=/work/main/.venv/bin/python
export TMPDIR=/tmp/twostage2-tmp
K="{\"SECOND_ROUND_SHARE\": $S}"
for spec in adult:3 loans:2 hhs_breaches:2 mn_police:2 wage:1; do
  t=${spec%%:*}; n=${spec##*:}
  /usr/bin/time -f "$t $TAG cpu_user %U cpu_sys %S wall %e" -a -o /tmp/twostage2-res/time.log \
    env PYTHONPATH=. nice -n 10 $P benchmarks/safe_gap.py --table $t --recipe aim --seeds $n --variants safe \
    --cache /tmp/twostage2-cache --out /tmp/twostage2-res/safe-$TAG.jsonl --constants "$K" \
    >> /tmp/twostage2-res/$TAG.log 2>&1
done
