"""dgcn-train in fp32 against --precision bf16 (issue 32), one JSON object.

Each repeat trains one epoch of the same store, fp32 and bf16 back to back
(the order alternating between repeats, so a shared machine's noise hits
both alike), seed = the repeat's index, and evaluates by layer-wise
full-neighbour inference; the medians of train seconds, eval seconds, peak
RSS and test accuracy, and the ratios of the medians. With --cora STORE,
also the Cora setup of Kipf & Welling (full neighbourhoods, 200 epochs) per
seed and precision: the mean test accuracy of each.

    python bench/precision_bench.py --data data/products.gcn --cora cora.gcn
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_json(cmd):
    """The JSON summary the command prints on stdout, or a RuntimeError with its stderr's tail."""
    out = subprocess.run(cmd, capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith('{')]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(lines[-1])


def train(args, data, precision, seed, extra):
    cmd = [os.path.join(args.bin, 'dgcn-train'), '--data', data, '--precision', precision, '--seed', str(seed),
           '--threads', str(args.threads)] + extra
    s = run_json(cmd)
    return {
        'train_s': s['train_s'],
        'eval_s': s['eval_s'],
        'test_acc': s.get('test_acc'),
        'peak_rss_bytes': max(s['memory']['peak_rss_bytes']),
        'feature_bytes': s['memory']['feature_bytes'],
        'param_digest': s['param_digest'],
        'cpu_bf16_instructions': s['precision'].get('cpu_bf16_instructions'),
    }


def medians(runs):
    keys = [k for k in runs[0] if isinstance(runs[0][k], (int, float)) and not isinstance(runs[0][k], bool)]
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--data', required=True, help='the store timed (e.g. the products preset)')
    p.add_argument('--cora', help='a Cora store (dgcn-prep npz/planetoid) for the accuracy comparison')
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--epochs', type=int, default=1)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--bin', default='build/bin')
    args = p.parse_args()

    runs = {'fp32': [], 'bf16': []}
    for r in range(args.repeats):
        order = ['fp32', 'bf16'] if r % 2 == 0 else ['bf16', 'fp32']
        for precision in order:
            res = train(args, args.data, precision, r, ['--epochs', str(args.epochs)])
            runs[precision].append(res)
            print(f'repeat {r} {precision}: {res}', file=sys.stderr)
    m = {k: medians(v) for k, v in runs.items()}
    report = {
        'data': args.data,
        'threads': args.threads,
        'epochs': args.epochs,
        'repeats': args.repeats,
        'runs': runs,
        'median': m,
        'fp32_over_bf16': {k: m['fp32'][k] / m['bf16'][k] for k in ('train_s', 'eval_s', 'peak_rss_bytes',
                                                                     'feature_bytes')},
        'test_acc_mean': {k: statistics.mean(r['test_acc'] for r in v) for k, v in runs.items()},
    }
    if args.cora:
        # Kipf & Welling's setup (PyG's gcn.py): 2 layers over every neighbour, hidden 16, dropout 0.5 on
        # the input and the hidden layer, weight decay 5e-4 on the first layer, 200 epochs.
        kipf = ['--num-neighbors', '-1,-1', '--batch-size', '140', '--hidden', '16', '--lr', '0.01',
                '--weight-decay', '5e-4', '--weight-decay-first-layer-only', '--dropout', '0.5',
                '--input-dropout', '0.5', '--normalize-features', '--epochs', '200', '--eval-every', '200']
        cora = {'fp32': [], 'bf16': []}
        for seed in range(args.repeats):
            for precision in ('fp32', 'bf16'):
                cora[precision].append(train(args, args.cora, precision, seed, kipf)['test_acc'])
        report['cora'] = {'test_acc': cora, 'mean': {k: statistics.mean(v) for k, v in cora.items()}}
    print(json.dumps(report))


if __name__ == '__main__':
    main()
