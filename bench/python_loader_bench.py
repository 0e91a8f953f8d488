"""dgcn.loader.NeighborLoader from Python against the C++ loader.

Runs ``dgcn-sampler-bench`` (the C++ loader, gathering features, N workers)
and then iterates ``dgcn.loader.NeighborLoader`` with the same store, fanouts,
batch size, seed and workers, consuming batches as fast as it can (building
each PyG ``Data``, touching nothing else), alternately ``--repeats`` times.
Prints one JSON object: the median rates in batches/s and sampled edges/s,
and the Python loader's slowdown. With as many workers as cores, the
consumer's own work per batch (edge_index, deg, the ``Data``) takes CPU from
the workers; with a core to spare it is hidden.

    python bench/python_loader_bench.py --data data/small.gcn --workers 2
"""
import argparse
import json
import os
import subprocess
import time

import torch

import dgcn
from dgcn.loader import NeighborLoader


def cpp_loader(args):
    binary = os.path.join(args.bin, 'dgcn-sampler-bench')
    cmd = [binary, '--data', args.data, '--num-neighbors', args.num_neighbors,
           '--batch-size', str(args.batch_size), '--threads', str(args.workers),
           '--batches', str(args.batches), '--seed', str(args.seed),
           '--queue-depth', str(args.prefetch), '--limit-seconds', '0.2']
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    run = json.loads(out.stdout)['runs'][0]
    return {'batches_per_s': run['loader_batches_per_s'],
            'sampled_edges_per_s': run['loader_batches_per_s'] *
            run['edges_per_batch'],
            'edges_per_batch': run['edges_per_batch']}


def median_run(runs):
    runs = sorted(runs, key=lambda r: r['batches_per_s'])
    return runs[len(runs) // 2]


def python_loader(args, store):
    loader = NeighborLoader(
        store, num_neighbors=[int(k) for k in args.num_neighbors.split(',')],
        batch_size=args.batch_size, input_nodes=store.train_index,
        shuffle=True,  # as dgcn-sampler-bench (PyG's default is False)
        seed=args.seed, num_workers=args.workers, prefetch=args.prefetch)
    def batches():  # epoch after epoch, as the C++ benchmark runs them
        while True:
            yield from loader

    it = batches()
    for _ in range(args.warmup):
        next(it)
    edges = 0
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(args.batches):
        batch = next(it)
        edges += batch.edge_index.size(1)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return {'batches_per_s': args.batches / seconds,
            'sampled_edges_per_s': edges / seconds,
            'edges_per_batch': edges / args.batches,
            'cpu_ms_per_batch': 1e3 * cpu / args.batches}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', default='data/small.gcn')
    parser.add_argument('--bin', default='build/bin')
    parser.add_argument('--num-neighbors', default='15,10,5')
    parser.add_argument('--batch-size', type=int, default=1024)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--prefetch', type=int, default=4)
    parser.add_argument('--batches', type=int, default=30)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

    store = dgcn.data.open_store(args.data)
    # Alternating runs, medians: a shared machine's noise hits both alike.
    pys, cpps = [], []
    for _ in range(args.repeats):
        pys.append(python_loader(args, store))
        cpps.append(cpp_loader(args))
    py, cpp = median_run(pys), median_run(cpps)
    print(json.dumps({
        'data': args.data, 'num_nodes': store.num_nodes,
        'num_edges': store.num_edges, 'num_neighbors': args.num_neighbors,
        'batch_size': args.batch_size, 'workers': args.workers,
        'torch_threads': torch.get_num_threads(),
        'repeats': args.repeats, 'cpp_loader': cpp, 'python_loader': py,
        'python_slowdown': 1 - py['batches_per_s'] / cpp['batches_per_s'],
    }, indent=1))


if __name__ == '__main__':
    main()
