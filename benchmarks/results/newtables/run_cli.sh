#!/bin/bash
# seeded measurement run: gos.sh TREE TABLE MODE SEED EVAL(yes|no)
TREE=$1; T=$2; MODE=$3; SEED=$4; EVAL=$5
D=/tmp/newtables-run/$(basename $TREE)/$T-$MODE-s$SEED
rm -rf $D; mkdir -p $D; cd $D
cp /tmp/newtables-data/$T.csv $T.csv
SP="env PYTHONPATH=$TREE nice -n 10 /work/main/.venv/bin/synthpriv"
if [ $MODE = safe ]; then $SP schema infer $T.csv > schema.yaml 2> infer.err; else $SP schema infer --from-data $T.csv > schema.yaml 2> infer.err; fi
echo "infer rc=$?" > rc.txt
printf "name: $T\ndata:\n  path: $T.csv\n  schema: schema.yaml\nbudget:\n  epsilon: 1.0\nseed: $SEED\n" > job.yaml
X=""; [ $EVAL = no ] && X="--no-evaluation"
/usr/bin/time -f "%U %S" -o time.txt $SP run job.yaml $X > run.out 2> run.err
echo "run rc=$?" >> rc.txt
