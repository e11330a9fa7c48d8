#!/bin/bash
P=/work/main/.venv/bin/python; T=/tmp/autolist-cache-before/suite/hhs_breaches/train.csv
for side in before:/tmp/autolist-main after:/work/wt-autolist; do
  s=${side%%:*}; code=${side#*:}
  /usr/bin/time -f "$s cpu %U+%S s" env PYTHONPATH=$code nice -n 10 $P benchmarks/list_state.py $T /tmp/autolist-state/$s $s State 1 2 3 4 2>&1 | grep -v Warn
done
