#!/bin/bash
# autolist "before": main f492ab9 (the branch's HEAD before its first commit), safe draft, AIM, eps 1, 4 runs
cd /work/wt-autolist
P=/work/main/.venv/bin/python; R=benchmarks/results/autolist
nice -n 10 $P benchmarks/suite.py --tables hhs_breaches,loans --recipes aim --repeats 4 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/autolist-cache-before --out $R/before --code head --fresh
