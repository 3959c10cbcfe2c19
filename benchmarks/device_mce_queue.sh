#!/usr/bin/env bash
# MCE's GPU kernel with and without its in-kernel queue (gthinker/apps/mce/bitsets_gpu.py,
# QUEUE): facebook_combined in gpu mode on 1, 2 and 4 GPUs, each run's seconds, count and
# per GPU (launches, kernel seconds, records spilled, the record buffer's peak words and the
# spills it refused, full). With the queue a launch searches every
# record its warps hand out: one launch per chunk of roots (plus the host's big subtrees),
# no tail of launches with few warps busy. From the repository root on a host with 4 GPUs
# (kind nvidia-h100-x4), carry [".whl", ".data"]:
#
#   bash benchmarks/device_mce_queue.sh
#
# env: GPUS (default 1,2,4), QUEUES (default 1,0: with, then without), REPEAT (default 2).
# Results (each run's JSON) in $OUT.
source "$(dirname "$0")/device_env.sh"
set +e
fb=$ROOT/.data/snap/facebook_combined.txt.gz
nvidia-smi -L
# gthinker's command line, with bitsets_gpu.QUEUE set first (argument 1: 1 or 0).
mce_with_queue="import sys; import gthinker.apps.mce.bitsets_gpu as mb
mb.QUEUE = sys.argv[1] == '1'; sys.argv = ['gthinker'] + sys.argv[2:]
from gthinker.cli.main import program; program()"
python3 -c "$mce_with_queue" 1 mce "$fb" --mode gpu --gpus 1 --quiet > /dev/null 2>&1  # graph prepared, GPU compiled
for g in $(echo "${GPUS:-1,2,4}" | tr , " "); do
  for q in $(echo "${QUEUES:-1,0}" | tr , " "); do
    for r in $(seq "${REPEAT:-2}"); do
      f=$OUT/mce_queue${q}_g${g}_r$r
      /usr/bin/time -f "whole %e s" python3 -c "$mce_with_queue" "$q" mce "$fb" --mode gpu --gpus "$g" --json \
        > "$f.json" 2> "$f.err"
      echo "queue $q gpus $g round $r: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print('seconds', d['seconds'], 'count', d['count'], \
'(launches, kernel s, spilled, buffer peak words, spills refused) per GPU', \
[(s['launches'], round(s['kernel_seconds'], 3), s['spilled'], s.get('buffer_peak_words'), \
s.get('spills_refused')) for s in d['stats']['gpus']])" \
        "$f.json" 2>&1 | tail -1) $(tail -1 "$f.err")"
    done
  done
done
