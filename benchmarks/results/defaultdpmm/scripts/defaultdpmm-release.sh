#!/bin/bash
# usage: defaultdpmm-release.sh TREE TAG MODE SEEDS...   (job = /tmp/defaultdpmm-jobs/MODE.yaml with seed)
TREE=$1; TAG=$2; MODE=$3; shift 3
for s in "$@"; do
  d=/tmp/defaultdpmm-rel/$TAG-$MODE-$s; mkdir -p $d
  { cat /tmp/defaultdpmm-jobs/$MODE.yaml; echo "seed: $s"; } > $d/job.yaml
  ( cd $TREE && /usr/bin/time -f "%U %S" -o $d/cpu.txt env PYTHONPATH=$TREE nice -n 10 /work/main/.venv/bin/python -c "
from pathlib import Path
from synthpriv.config import load_job
from synthpriv.runner import run_job
run_job(load_job(Path('$d/job.yaml')), out=Path('$d/release'), force=True)
" > $d/log.txt 2>&1 ) || echo "FAIL $d"
done
