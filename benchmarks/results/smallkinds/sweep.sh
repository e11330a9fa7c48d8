#!/bin/sh
# The value sweep before (main 71114f6, a git archive at /tmp/smallkinds-main) and after (this
# branch) on the tables issue 24's smallkinds task names, seeds 0-4; JSON per code and seed.
# Run from the worktree root.
TABLES="macrodata star98 Hitters grunfeld Boston Publication islp/OJ Carseats Credit NCI60labs islp/Wage"
OUT=benchmarks/results/smallkinds
for seed in 0 1 2 3 4; do
  for code in before after; do
    if [ "$code" = before ]; then tree=/tmp/smallkinds-main; else tree=$PWD; fi
    PYTHONPATH=$tree nice -n 10 /work/main/.venv/bin/python benchmarks/value_sweep.py $TABLES \
      --seed "$seed" --json "$OUT/sweep-$code-seed$seed.json" > /dev/null
  done
done
