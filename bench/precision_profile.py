"""Where a products batch's CPU time goes, fp32 against bf16 (issue 32), from
a sampling profile of dgcn-train itself rather than of the pieces timed
apart (bench/precision_breakdown.py): `perf record` (cycles in user space,
every thread) over --max-batches batches with --eval none, each symbol put
in one bucket (the first layer's SpMM, which is also the input gather; the
hidden layers' SpMM; building the blocks' adjacency; the dense products;
the bias gradient; ReLU + dropout; casts; the sampler's thread; allocation;
the rest), the store's load and digest left out. CPU milliseconds per
batch summed over threads, so a loaded machine slows it less than wall
time. One JSON object; needs perf (linux-tools) and perf_event_paranoid <= 2.

    python bench/precision_profile.py --data data/products.gcn --batches 40
"""
import argparse
import collections
import json
import os
import re
import subprocess
import tempfile

# First match wins; the patterns are symbol names of dgcn-train, LibTorch, oneDNN (JIT code), MKL.
BUCKETS = [
    ('spmm_first_layer', r'rows_avx512<7'),  # 100 input features: 7 vectors of 16
    ('spmm_hidden', r'rows_avx512<|rows_portable|spmm|scatter'),
    ('adjacency', r'cpu::transpose|normalize_block|batch_degrees|use_global_columns|gcn_norm|block_adjacency'),
    ('dense', r'sgemm|gemm|\[JIT\]|jit_|dnnl'),
    ('bias_gradient', r'outer_sum|sum_kernel|reduce_kernel'),
    ('relu_dropout', r'relu_dropout|dropout_loop'),
    ('casts', r'copy_kernel|reduced_float'),
    ('sampler', r'BatchSampler|sample_hop|for_each_chunk'),
    ('startup', r'validate|check_indices|XXH3|zstd|registerKernel|OperatorEntry|Xbyak|_dl_|SharedParser|'
                r'jit::|cublas|cuda|nvJit|cusparse|do_lookup|Dispatcher::findOp|FunctionSchema'),
    ('allocation', r'mem(set|move|cpy)|malloc|free|_int_|unlink_chunk'),
]


def profile(args, precision, folder):
    data = os.path.join(folder, precision + '.data')
    cmd = ['perf', 'record', '-q', '-e', 'cycles:u', '-F', str(args.frequency), '-o', data, '--',
           os.path.join(args.bin, 'dgcn-train'), '--data', args.data, '--epochs', '1', '--eval', 'none',
           '--max-batches', str(args.batches), '--threads', str(args.threads), '--seed', '0',
           '--precision', precision]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    report = subprocess.run(['perf', 'report', '-i', data, '--no-children', '--sort', 'dso,sym', '--stdio', '-F',
                             'sample,dso,sym', '--field-separator', '|'], capture_output=True, text=True,
                            check=True).stdout
    samples = collections.Counter()
    for line in report.splitlines():
        parts = line.split('|')
        if line.startswith('#') or len(parts) < 3 or not parts[0].strip().isdigit():
            continue
        symbol = '|'.join(parts[1:])
        bucket = next((name for name, pattern in BUCKETS if re.search(pattern, symbol)), 'other')
        samples[bucket] += int(parts[0])
    ms = {k: v / args.frequency / args.batches * 1e3 for k, v in samples.items()}
    ms['total_without_startup'] = sum(v for k, v in ms.items() if k != 'startup')
    return ms


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--data', required=True)
    p.add_argument('--batches', type=int, default=40)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--frequency', type=int, default=499, help='samples per second per thread')
    p.add_argument('--bin', default='build/bin')
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cpu_ms = {precision: profile(args, precision, folder) for precision in ('fp32', 'bf16')}
    keys = sorted(set(cpu_ms['fp32']) | set(cpu_ms['bf16']))
    ratio = {k: cpu_ms['fp32'].get(k, 0) / cpu_ms['bf16'][k] for k in keys if cpu_ms['bf16'].get(k)}
    print(json.dumps({'data': args.data, 'batches': args.batches, 'threads': args.threads,
                      'cpu_ms_per_batch': cpu_ms, 'fp32_over_bf16': ratio, 'load_average': os.getloadavg()}))


if __name__ == '__main__':
    main()
