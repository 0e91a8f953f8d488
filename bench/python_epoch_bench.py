"""A Python training epoch (examples/gcn_ddp.py) against dgcn-train.

Both train the same GCN (3 layers, ``--hidden``, Adam, dropout 0.5) on the
same store with the same fanouts, batch size per rank, ranks, torch threads
and sampler workers, for the first ``--batches`` batches of one epoch, no
evaluation; each reports its training seconds. Two pairings, run alternately
``--repeats`` times (a shared machine's noise hits both alike), medians:

- ``read_store``: dgcn-train as it runs by default (the first layer reads the
  feature rows from the store) against the example with ``--read-store``
  (``NeighborLoader(gather_features=False)``, ``GCNConv(..., n_id=...)``);
- ``gathered``: ``dgcn-train --gather-in-loader`` against the example as a
  PyG user writes it (every batch carries ``x``).

PyG's own ``NeighborLoader`` needs pyg-lib or torch-sparse; the JSON says
whether this environment has either.

    python bench/python_epoch_bench.py --data data/products.gcn
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_json(cmd, env):
    """The last JSON line the command prints on stdout (rank 0's, for the
    example), or a RuntimeError with its stderr's tail."""
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith('{')]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n"
                           f"{out.stderr[-3000:]}")
    return json.loads(lines[0])


def dgcn_train(args, gather):
    cmd = [os.path.join(args.bin, 'dgcn-train'), '--data', args.data,
           '--nproc-per-node', str(args.ranks), '--epochs', '1',
           '--max-batches', str(args.batches), '--eval', 'none',
           '--num-neighbors', args.num_neighbors,
           '--batch-size', str(args.batch_size), '--hidden', str(args.hidden),
           '--threads', str(args.threads), '--workers', str(args.workers),
           '--seed', str(args.seed)]
    if gather:
        cmd.append('--gather-in-loader')
    return run_json(cmd, os.environ)['train_s']


def python_example(args, gather):
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--standalone',
           '--nproc-per-node', str(args.ranks),
           os.path.join(args.source, 'examples', 'gcn_ddp.py'),
           '--data', args.data, '--epochs', '1',
           '--max-batches', str(args.batches), '--no-eval',
           '--num-neighbors', args.num_neighbors,
           '--batch-size', str(args.batch_size), '--hidden', str(args.hidden),
           '--threads', str(args.threads), '--workers', str(args.workers),
           '--seed', str(args.seed)]
    if not gather:
        cmd.append('--read-store')
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    return run_json(cmd, env)['train_s']


def pyg_sampler():
    try:
        import torch_geometric.typing as t
    except ImportError as e:
        return f'torch_geometric not importable: {e}'
    if t.WITH_PYG_LIB:
        return 'pyg-lib'
    if t.WITH_TORCH_SPARSE:
        return 'torch-sparse'
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', default='data/products.gcn')
    parser.add_argument('--bin', default='build/bin')
    parser.add_argument('--source', default='.',
                        help='the repository (for examples/gcn_ddp.py)')
    parser.add_argument('--ranks', type=int, default=2)
    parser.add_argument('--num-neighbors', default='15,10,5')
    parser.add_argument('--batch-size', type=int, default=1024,
                        help='seeds per batch and rank')
    parser.add_argument('--hidden', type=int, default=128)
    parser.add_argument('--threads', type=int, default=1,
                        help='torch threads per rank')
    parser.add_argument('--workers', type=int, default=1,
                        help='sampler threads per rank')
    parser.add_argument('--batches', type=int, default=30)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--pairings', default='read_store,gathered')
    args = parser.parse_args()

    result = {'data': args.data, 'ranks': args.ranks,
              'num_neighbors': args.num_neighbors,
              'batch_size_per_rank': args.batch_size, 'hidden': args.hidden,
              'threads': args.threads, 'workers': args.workers,
              'batches': args.batches, 'repeats': args.repeats,
              'pyg_sampler': pyg_sampler()}
    for pairing in args.pairings.split(','):
        gather = pairing == 'gathered'
        cpp, py = [], []
        for _ in range(args.repeats):
            cpp.append(dgcn_train(args, gather))
            py.append(python_example(args, gather))
            print(f'{pairing}: dgcn-train {cpp[-1]:.2f} s, '
                  f'python {py[-1]:.2f} s', file=sys.stderr, flush=True)
        result[pairing] = {
            'dgcn_train_s': cpp, 'python_s': py,
            'python_over_dgcn_train': statistics.median(py) /
            statistics.median(cpp)}
    print(json.dumps(result, indent=1))


if __name__ == '__main__':
    main()
