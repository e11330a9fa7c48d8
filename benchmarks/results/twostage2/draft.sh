#!/bin/bash
cd /tmp/twostage2-run
export TMPDIR=/tmp/twostage2-tmp
/usr/bin/time -f "adult draft cpu_user %U cpu_sys %S wall %e" -a -o /tmp/twostage2-res/time.log \
  env PYTHONPATH=. nice -n 12 /work/main/.venv/bin/python benchmarks/safe_gap.py --table adult --recipe aim --seeds 3 --variants draft \
  --cache /tmp/twostage2-cache --out /tmp/twostage2-res/draft.jsonl >> /tmp/twostage2-res/draft.log 2>&1
