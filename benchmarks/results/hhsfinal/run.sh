# hhsfinal (1): hhs_breaches, AIM, eps 1, safe draft, 8 runs with and 8 without the list line, main dbe6e06 (--code head)
set -e
P=/work/main/.venv/bin/python; R=benchmarks/results/hhsfinal
nice -n 10 $P benchmarks/suite.py --tables hhs_breaches --recipes aim --repeats 8 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/hhsfinal-cache-lists --out $R/lists --code head --fresh \
    --list hhs_breaches.State=us_state_code
nice -n 10 $P benchmarks/suite.py --tables hhs_breaches --recipes aim --repeats 8 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/hhsfinal-cache --out $R/nolist --code head --fresh
