#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang-14, ASan + UBSan, no LibTorch)
# into build-asan/ (the build scripts/sanitize.sh torch-free tests), makes
# their seed corpora (fuzz/make_corpus.py and dgcn-prep, partition folders
# included) and runs each target,
# then prints one line per target: executions, findings (crash-/leak-/
# timeout-/oom- files) and where they are.
#   scripts/fuzz.sh [--seconds N] [--runs N] [--jobs J] [TARGET...]   (default: every target, 10 s each)
#   scripts/fuzz.sh --configure-only   (configure build-asan/ and stop)
# A run ends at N seconds or N executions, whichever comes first. Exit
# status 1 when any target found something. Corpora grow in
# build-asan/corpus/<target>, findings go to build-asan/findings/<target>.
set -euo pipefail
cd "$(dirname "$0")/.."
# The environment's python3 (numpy, scipy) writes the corpora.
source scripts/env.sh
seconds=10
runs=0
jobs=1
configure_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --configure-only) configure_only=1; shift ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(gcn_fuzz npy_fuzz npz_fuzz edgelist_fuzz ogb_fuzz graphsaint_fuzz mnist_fuzz pickle_fuzz planetoid_fuzz
     partition_fuzz)
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target $t (targets: ${all[*]})" >&2; exit 2; }
done

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
build=build-asan
if [ ! -f $build/CMakeCache.txt ]; then
  cmake -S . -B $build "${generator[@]}" -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_C_COMPILER=clang-14 \
    -DCMAKE_CXX_COMPILER=clang++-14 -DDGCN_WITH_TORCH=OFF -DDGCN_BUILD_TESTS=ON -DDGCN_CUDA=OFF -DDGCN_FUZZ=ON \
    "-DDGCN_SANITIZE=address;undefined" >/dev/null
fi
[ "$configure_only" -eq 0 ] || exit 0
cmake --build $build --parallel "${DGCN_BUILD_JOBS:-$(nproc)}" --target dgcn-prep "${targets[@]}"

corpus=$build/corpus
if [ ! -d "$corpus/gcn_fuzz" ]; then
  python3 fuzz/make_corpus.py "$corpus"
  mkdir -p "$corpus/gcn_fuzz"
  prep=$build/bin/dgcn-prep
  for seed in "$corpus"/npz_fuzz/*; do
    cp "$seed" "$corpus/seed.npz"
    "$prep" npz --file "$corpus/seed.npz" --split ratio:0.5,0.25,0.25 --out "$corpus/gcn_fuzz/$(basename "$seed").gcn" >/dev/null 2>&1 || true
    "$prep" npz --file "$corpus/seed.npz" --split ratio:0.5,0.25,0.25 --raw --out "$corpus/gcn_fuzz/$(basename "$seed")-raw.gcn" >/dev/null 2>&1 || true
  done
  "$prep" synthetic --preset tiny --num-nodes 60 --mean-degree 4 --num-features 3 --out "$corpus/gcn_fuzz/synthetic.gcn" >/dev/null 2>&1
  rm -f "$corpus/seed.npz"
fi
if [ ! -d "$corpus/partition_fuzz" ]; then
  # A 2-part partition of a small store: its folder packed as the harness
  # reads it (fuzz/fuzz_files.h), and its parts as .gcn seeds.
  prep=$build/bin/dgcn-prep
  parts=$corpus/seed-parts
  rm -rf "$parts"
  "$prep" synthetic --preset tiny --num-nodes 60 --mean-degree 4 --num-features 3 --out "$corpus/seed.gcn" >/dev/null 2>&1
  for method in metis random; do
    "$prep" partition "$corpus/seed.gcn" --parts 2 --method $method --out "$parts" >/dev/null 2>&1
    mkdir -p "$corpus/partition_fuzz"
    python3 -c 'import struct, sys
out = open(sys.argv[1], "wb")
for f in sys.argv[2:]:
    b = open(f, "rb").read()
    out.write(struct.pack("<I", len(b)) + b)' "$corpus/partition_fuzz/$method" "$parts/partition.json" \
      "$parts/part-000.gcn" "$parts/part-001.gcn"
    cp "$parts/part-001.gcn" "$corpus/gcn_fuzz/part-$method.gcn"
    rm -rf "$parts"
  done
  rm -f "$corpus/seed.gcn"
fi

status=0
printf '%-18s %12s %9s  %s\n' target executions findings artifacts
for t in "${targets[@]}"; do
  findings=$build/findings/$t
  mkdir -p "$findings" "$corpus/$t"
  log=$build/findings/$t.log
  args=(-max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=65536 -artifact_prefix="$findings/"
        -print_final_stats=1)
  [ "$runs" -gt 0 ] && args+=(-runs="$runs")
  if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs" -ignore_crashes=1); fi
  $build/fuzz/"$t" "${args[@]}" "$corpus/$t" >"$log" 2>&1 || true
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
  n=$(find "$findings" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  [ "$n" -eq 0 ] || status=1
  printf '%-18s %12s %9s  %s\n' "$t" "${execs:-?}" "$n" "$findings"
done
exit $status
