#!/bin/bash
# dpmm 0.1.9 (its venv): MST first on all four tables, then AIM, then PrivBayes; 3 repeats,
# cap 600 s per run, one BLAS thread, Private-PGM 1000 iterations (remeasure9/dpmmaim's setting)
cd /work/wt-dpmmcont
C=/tmp/dpmmcont-cache; P=/work/main/.venv/bin/python; R=benchmarks/results/dpmmcont/dpmm
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
for model in "$@"; do
  out=/tmp/dpmmcont-runs/dpmm-$model${TAG:-}
  nice -n 10 /work/venv-dpmm/bin/python benchmarks/dpmm_baseline.py --tables ${TABLES:-oj,smarket,boston,carseats} \
      --models $model --repeats 3 --max-seconds 600 --pgm-iters 1000 --work $C/suite --out $out
  PYTHONPATH=. nice -n 10 $P benchmarks/suite.py --score-dpmm $out --cache $C --out $R${TAG:-}
done
