#!/bin/bash
# Adult and Wage: the domain decision (safe draft, eps 1, seeds 1-6), before (main ae74f69) vs after
P=/work/main/.venv/bin/python; R=benchmarks/results/listtest
cd /work/wt-listtest
for side in before:/tmp/listtest-main after:/work/wt-listtest; do
  s=${side%%:*}; code=${side#*:}
  env PYTHONPATH=$code nice -n 10 $P $R/listtest-dom.py /work/shared/data/adult/adult_train.csv /tmp/listtest-adult-$s native-country 1 2 3 4 5 6 2>&1 | grep -v Warn > $R/adult-$s.txt
  env PYTHONPATH=$code nice -n 10 $P $R/listtest-dom.py /tmp/listtest-cache-before/suite/wage/train.csv /tmp/listtest-wage-$s region 1 2 3 4 5 6 2>&1 | grep -v Warn > $R/wage-$s.txt
done
# loans' state: the domain decision, seeds 1-10
for side in before:/tmp/listtest-main after:/work/wt-listtest; do
  s=${side%%:*}; code=${side#*:}
  env PYTHONPATH=$code nice -n 10 $P $R/listtest-dom.py /tmp/listtest-cache-before/suite/loans/train.csv /tmp/listtest-loans-$s state $(seq 1 10) 2>&1 | grep -v Warn > $R/loans-$s.txt
done
