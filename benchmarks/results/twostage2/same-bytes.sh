#!/bin/bash
# same release bytes at r = 0: main's tree vs this branch's, safe AIM, seed 100, hhs_breaches + wage
P=/work/main/.venv/bin/python
for tree in /tmp/twostage2-main /work/wt-twostage2; do
  for t in hhs_breaches wage; do
    (cd $tree && TMPDIR=/tmp/twostage2-same PYTHONPATH=. nice -n 10 $P benchmarks/safe_gap.py --table $t --recipe aim --seeds 1 \
      --variants safe --cache /tmp/twostage2-cache --out /tmp/twostage2-same/out.jsonl)
  done
done
for d in /tmp/twostage2-same/safe-gap-*; do echo "$(sha256sum $d/variant-safe-0.csv | cut -c1-16) $(ls -d $d/*/ | grep -v release | xargs -n1 basename) $(grep -o '/tmp/twostage2-main\|/work/wt-twostage2' $d/variant-safe.job.yaml | head -1)"; done
