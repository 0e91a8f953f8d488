"""GCN, GraphSAGE and GAT through dgcn-train on one store (issue 33), one JSON object.

Each model trains the same recipe (fanouts, batch size, epochs, seed, ranks)
through the built-in launcher, evaluated once at the end by layer-wise
full-neighbour inference. With several repeats the models run interleaved,
the order reversed every other repeat, so a shared machine's load hits them
alike. Per model: training seconds per epoch and per batch (from the
--metrics-out lines: the batches a rank trained), evaluation seconds, the
final test accuracy, every rank's peak RSS; medians over the repeats.

GAT keeps the hidden width of the others by default: --gat-heads 4 heads of
--hidden / 4 features, concatenated (PyG's GATConv(hidden // heads, heads)).

    python bench/models_products.py --data data/products.gcn   # 2 ranks, [15,10,5], batch 1024, 1 epoch
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_model(args, model, seed):
    """One dgcn-train run: its summary and its epoch lines, or a RuntimeError with stderr's tail."""
    extra = ['--hidden', str(args.hidden)]
    if model == 'gat':
        if args.hidden % args.gat_heads:
            raise SystemExit(f'--hidden {args.hidden} is not a multiple of --gat-heads {args.gat_heads}')
        extra = ['--heads', str(args.gat_heads), '--hidden', str(args.hidden // args.gat_heads)]
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, 'metrics.jsonl')
        cmd = [os.path.join(args.bin, 'dgcn-train'), '--data', args.data, '--model', model,
               '--nproc-per-node', str(args.ranks), '--num-neighbors', args.num_neighbors,
               '--batch-size', str(args.batch_size), '--epochs', str(args.epochs),
               '--eval-every', str(args.epochs), '--seed', str(seed),
               '--max-batches', str(args.max_batches)] + extra + ['--metrics-out', metrics]
        out = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith('{')]
        if out.returncode != 0 or not lines:
            raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
        with open(metrics) as f:
            epochs = [e for e in map(json.loads, f) if 'epoch' in e]
    s = json.loads(lines[-1])
    batches = sum(e['batches'] for e in epochs)
    return {
        'command': ' '.join(cmd[:-2]),
        'train_s_per_epoch': s['train_s'] / args.epochs,
        'train_s_per_batch': s['train_s'] / batches,
        'batches_per_epoch': batches / args.epochs,
        'eval_s': s['eval_s'],
        'test_acc': s['test_acc'],
        'valid_acc': s['valid_acc'],
        'train_loss_last_epoch': epochs[-1]['loss'],
        'peak_rss_bytes': max(s['memory']['peak_rss_bytes']),
        'param_digest': s['param_digest'],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--data', required=True, help='the store (e.g. data/products.gcn, the products preset)')
    p.add_argument('--models', default='gcn,sage,gat')
    p.add_argument('--ranks', type=int, default=2)
    p.add_argument('--num-neighbors', default='15,10,5')
    p.add_argument('--batch-size', type=int, default=1024)
    p.add_argument('--hidden', type=int, default=128, help='hidden width of every model (GAT: all heads together)')
    p.add_argument('--gat-heads', type=int, default=4)
    p.add_argument('--epochs', type=int, default=1)
    p.add_argument('--max-batches', type=int, default=0, help='train only the first N batches of each epoch')
    p.add_argument('--repeats', type=int, default=1)
    p.add_argument('--bin', default='build/bin')
    args = p.parse_args()

    models = args.models.split(',')
    runs = {m: [] for m in models}
    for r in range(args.repeats):
        for model in (models if r % 2 == 0 else models[::-1]):
            res = run_model(args, model, r)
            runs[model].append(res)
            print(f'repeat {r} {model}: {res}', file=sys.stderr, flush=True)
    numeric = ('train_s_per_epoch', 'train_s_per_batch', 'eval_s', 'test_acc', 'peak_rss_bytes')
    print(json.dumps({
        'data': args.data,
        'ranks': args.ranks,
        'num_neighbors': args.num_neighbors,
        'batch_size': args.batch_size,
        'hidden': args.hidden,
        'gat_heads': args.gat_heads,
        'epochs': args.epochs,
        'max_batches': args.max_batches,
        'repeats': args.repeats,
        'median': {m: {k: statistics.median(x[k] for x in v) for k in numeric} for m, v in runs.items()},
        'runs': runs,
    }))


if __name__ == '__main__':
    main()
