#!/bin/sh
# Branch zerofrac: the default release before (main dbe6e06, a git archive at /tmp/zerofrac-main)
# and after (this branch) on OJ and the guard tables, seeds 0-3. Run from the worktree root.
TABLES="islp/OJ islp/Boston islp/Carseats islp/Credit islp/Wage"
OUT=benchmarks/results/zerofrac
code=$1
if [ "$code" = before ]; then tree=/tmp/zerofrac-main; else tree=$PWD; fi
PYTHONPATH=$tree nice -n 10 /work/main/.venv/bin/python benchmarks/zerofrac_sweep.py $TABLES \
  --seeds 0,1,2,3 --json "$OUT/sweep-$code.json"
