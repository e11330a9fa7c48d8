# ojheaps: the runs as made (2026-11-27, 03:15-04:00 UTC), from /work/wt-ojheaps.
# before = git archive of main 71114f6 (synthpriv, pipelines) in /tmp/ojheaps-main (and
# /tmp/ojheaps-snap/code-71114f6 for the suite); after = git archive of ojheaps f96e147 in
# /tmp/ojheaps-snap/code-f96e147 (the code; later commits change docs and benchmarks only).
P=/work/main/.venv/bin/python; B=/tmp/ojheaps-main; A=/tmp/ojheaps-snap/code-f96e147
# OJ, 10 paired seeds (run as 0-4 and 5-9, the JSON concatenated into oj-before/after.json)
nice -n 10 env PYTHONPATH=$B $P benchmarks/oj_heaps.py islp/OJ --seeds 0 1 2 3 4 5 6 7 8 9 --json oj-before.json
nice -n 10 env PYTHONPATH=$A $P benchmarks/oj_heaps.py islp/OJ --seeds 0 1 2 3 4 5 6 7 8 9 --json oj-after.json
PYTHONPATH=. $P benchmarks/oj_heaps.py --compare oj-before.json oj-after.json > oj-compare.md
# guard tables: value sweep, 3 seeds
for s in 0 1 2; do for t in before:$B after:$A; do
  nice -n 10 env PYTHONPATH=${t#*:} $P benchmarks/value_sweep.py islp/Wage islp/Bikeshare islp/Carseats \
    statsmodels/fair/fair --seed $s --json guard-${t%%:*}-s$s.json
done; done
# guard tables (and OJ): mean 2-way TVD at 10 real-quantile bins, 3 seeds (daterange.py's figures)
for t in before:$B after:$A; do
  nice -n 10 env PYTHONPATH=${t#*:} $P benchmarks/daterange.py --seeds 0,1,2 \
    --tables islp/Wage,islp/Bikeshare,islp/Carseats,statsmodels/fair/fair,islp/OJ --tag ojheaps-${t%%:*} > tvd-${t%%:*}.jsonl
done
# Adult, AIM, safe draft, eps = 1, 3 repeats (private cache with the three wheel links)
for t in before:code-71114f6 after:code-f96e147; do
  SYNTHPRIV_SUITE_CODE=/tmp/ojheaps-snap/${t#*:} PYTHONPATH=/tmp/ojheaps-snap/${t#*:} nice -n 10 $P \
    benchmarks/suite.py --tables adult --recipes aim --repeats 3 --schema-modes safe --epsilons 1 \
    --max-seconds 1800 --cache /tmp/ojheaps-cache --out /tmp/ojheaps-suite-${t%%:*} --fresh
done   # runs.jsonl copied to adult-{before,after}-runs.jsonl
# the planted bug
PYTHONPATH=. $P benchmarks/privacy_mutations.py --python $P --targeted --only lattice-candidates-present-only > mutation.md
# Bikeshare, three more seeds (its 2-way TVD moved +0.0017 on seeds 0-2)
for t in before:$B after:$A; do
  nice -n 10 env PYTHONPATH=${t#*:} $P benchmarks/daterange.py --seeds 3,4,5 --tables islp/Bikeshare \
    --tag ojheaps-${t%%:*} > tvd-bikeshare-s345-${t%%:*}.jsonl
done
