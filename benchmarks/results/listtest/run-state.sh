#!/bin/bash
# seeded, paired: the released State column (hhs_breaches, safe draft, AIM, eps 1, seeds 1-8), and the
# domain decision alone over seeds 1-40; before = main ae74f69's synthpriv (/tmp/listtest-main), after = this branch
P=/work/main/.venv/bin/python; T=/tmp/listtest-data/hhs/train.csv; R=benchmarks/results/listtest
cd /work/wt-listtest
for side in before:/tmp/listtest-main after:/work/wt-listtest; do
  s=${side%%:*}; code=${side#*:}
  env PYTHONPATH=$code nice -n 10 $P $R/listtest-dom.py $T /tmp/listtest-dom-$s State $(seq 1 40) 2>&1 | grep -v Warn > $R/dom-$s.txt
  /usr/bin/time -f "$s cpu %U+%S s" env PYTHONPATH=$code nice -n 10 $P benchmarks/list_state.py $T /tmp/listtest-state/$s $s State 1 2 3 4 5 6 7 8 2>&1 | grep -v Warn
done
