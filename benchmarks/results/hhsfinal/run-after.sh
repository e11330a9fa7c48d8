# hhsfinal (2): the same two cells on the branch's guard_noise (v3; --code head = the branch's commit)
set -e
P=/work/main/.venv/bin/python; R=benchmarks/results/hhsfinal
nice -n 10 $P benchmarks/suite.py --tables hhs_breaches --recipes aim --repeats 8 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/hhsfinal-cache2-lists --out $R/after-lists --code head --fresh \
    --list hhs_breaches.State=us_state_code
nice -n 10 $P benchmarks/suite.py --tables hhs_breaches --recipes aim --repeats 8 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/hhsfinal-cache2 --out $R/after-nolist --code head --fresh
