#!/bin/bash
P=/work/main/.venv/bin/python
for t in adult:/work/wt-autolist/data/adult/adult_train.csv wage:/tmp/autolist-cache-before/suite/wage/train.csv; do
  n=${t%%:*}; f=${t#*:}
  for side in before:/tmp/autolist-main after:/work/wt-autolist; do
    s=${side%%:*}; code=${side#*:}
    echo "== $n $s"; /usr/bin/time -f "cpu %U+%S s" env PYTHONPATH=$code nice -n 10 $P /tmp/autolist-same.py $f /tmp/autolist-same/$n-$s independent 2>&1 | grep -v Warning
  done
done
