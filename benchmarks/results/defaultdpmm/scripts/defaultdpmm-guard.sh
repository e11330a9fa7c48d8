#!/bin/bash
# usage: guard.sh TABLE TRAIN SCHEMA OUT
cd /work/wt-defaultdpmm
for tree in main branch; do
  PYTHONPATH=. nice -n 10 /work/main/.venv/bin/python benchmarks/default_pairs.py --train $2 --schema $3 --tag $tree-$1 $(ls -d /tmp/defaultdpmm-rel/$tree-$1-[0-9]*/release/synthetic.csv) --json $4 > /dev/null
done
