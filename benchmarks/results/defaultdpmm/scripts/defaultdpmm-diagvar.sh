#!/bin/bash
# usage: diagvar.sh TAG OUT   (TAG = dir prefix under /tmp/defaultdpmm-rel, e.g. main-safe_rpa8)
C=/tmp/defaultdpmm-cache/suite/default
cd /work/wt-defaultdpmm && PYTHONPATH=. nice -n 10 /work/main/.venv/bin/python benchmarks/default_pairs.py --train $C/train.csv --schema $C/schema-draft.yaml --tag $1 $(ls -d /tmp/defaultdpmm-rel/$1-[0-9]*/release/synthetic.csv) --mass balance=0 --json $2 > /dev/null
