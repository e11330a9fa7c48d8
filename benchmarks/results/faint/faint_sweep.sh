#!/bin/bash
# value_sweep on small dev tables, main vs faint, seeds 0-2
T="star98 macrodata grunfeld Hitters islp/Auto Publication Boston Carseats Credit anes96 College islp/Wage"
for s in 0 1 2; do
  for tree in fmain:/tmp/lead/fmain faint:/work/wt-faint; do
    n=${tree%%:*}; d=${tree#*:}
    (cd $d && PYTHONPATH=. nice -n 10 /work/main/.venv/bin/python benchmarks/value_sweep.py $T --seed $s --json /tmp/lead/vs_${n}_$s.json > /tmp/lead/vs_${n}_$s.txt 2>&1)
  done
done
echo done > /tmp/lead/faint_sweep.done
