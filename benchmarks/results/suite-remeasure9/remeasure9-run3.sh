#!/bin/bash
cd /work/wt-remeasure9
C=/work/remeasure9-cache
R=benchmarks/results/suite-remeasure9; P=/work/main/.venv/bin/python
S="--epsilons 1 --max-seconds 900 --cache $C --out $R --code head"
nice -n 10 $P benchmarks/suite.py --tables wage,randhie,loans --recipes aim --repeats 4 --schema-modes draft,safe $S
echo "=== wage,randhie,loans 5-8 done $(date -u)"
