#!/bin/bash
# listtest suite: before = main ae74f69 (run from /work/main, --code head), after = branch listtest HEAD
P=/work/main/.venv/bin/python
cd /work/main && nice -n 10 $P benchmarks/suite.py --tables hhs_breaches,loans --recipes aim --repeats 4 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/listtest-cache-before --out /tmp/listtest-suite/before --code head --fresh
cd /work/wt-listtest && nice -n 10 $P benchmarks/suite.py --tables hhs_breaches,loans --recipes aim --repeats 4 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/listtest-cache-after --out /tmp/listtest-suite/after --code head --fresh
# (run in parallel with the above to fit the deadline: the "after" side actually measured, from the branch's HEAD 0c33ec3+)
cd /work/wt-listtest && nice -n 10 $P benchmarks/suite.py --tables hhs_breaches,loans --recipes aim --repeats 4 --schema-modes safe \
    --epsilons 1 --max-seconds 900 --cache /tmp/listtest-cache-after2 --out /tmp/listtest-suite/after2 --code head --fresh
