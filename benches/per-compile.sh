#!/bin/sh
# What ONE compile of a shader costs, in x86 instructions counted by callgrind, with one-time
# initialisation (lookup tables built on first use, process start) cancelled out: the file is
# compiled 11 times and once, and the difference is divided by 10.
#
# usage: benches/per-compile.sh BENCH_BINARY FILE.tgsi [OUT_PREFIX]
#   BENCH_BINARY: the path `cargo bench --bench compile --no-run` prints.
# The two callgrind profiles stay at OUT_PREFIX-1.out and OUT_PREFIX-11.out (default
# /tmp/percompile) for a per-function comparison with callgrind_annotate.
set -e
bin=$1; file=$2; out=${3:-/tmp/percompile}
if [ -z "$bin" ] || [ -z "$file" ]; then
  echo "usage: $0 BENCH_BINARY FILE.tgsi [OUT_PREFIX]" >&2
  exit 2
fi
for n in 1 11; do
  TGSI_BENCH_PROFILE=$n TGSI_BENCH_FILE=$file valgrind --tool=callgrind \
    --callgrind-out-file="$out-$n.out" "$bin" --bench >/dev/null 2>"$out-$n.log"
done
one=$(grep -o 'Collected : [0-9]*' "$out-1.log" | awk '{print $3}')
eleven=$(grep -o 'Collected : [0-9]*' "$out-11.log" | awk '{print $3}')
echo "$(( (eleven - one) / 10 )) x86 instructions per compile of $file"
