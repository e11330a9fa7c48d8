#!/bin/bash
# ours: AIM, both drafts, 3 repeats, eps 1, cap 600 s, under nice -n 10, own cache/out folders
cd /work/wt-dpmmcont
C=/tmp/dpmmcont-cache; R=benchmarks/results/dpmmcont/ours; P=/work/main/.venv/bin/python
export PYTHONPATH=.
S="--epsilons 1 --max-seconds 600 --cache $C --out $R --code head"
nice -n 10 $P benchmarks/suite.py --tables oj,smarket,boston,carseats --recipes aim --repeats 3 \
    --schema-modes draft,safe $S --fresh
