#!/bin/bash
# autolist "after": branch autolist HEAD (MIN_DISCOVERED = 1), same command, own cache
cd /work/wt-autolist
P=/work/main/.venv/bin/python; R=benchmarks/results/autolist
nice -n 10 $P benchmarks/suite.py --tables hhs_breaches,loans --recipes aim --repeats 4 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/autolist-cache-after --out $R/after --code head --fresh
