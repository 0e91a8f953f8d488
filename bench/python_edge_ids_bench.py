"""e_id of a store's NeighborLoader batches (dgcn._edge_ids.EdgeIds).

Samples --batches batches once (without e_id), then times building
EdgeIds for the store (once per loader) and mapping every batch's sampled
edges to CSR positions, alternately --repeats times; with --baseline FILE
(another version of python/dgcn/_edge_ids.py, e.g. from git show), that
version is timed on the same batches too, and must give the same e_id.
Prints one JSON object with the medians.

    python bench/python_edge_ids_bench.py --data data/products.gcn \\
        --baseline /tmp/old_edge_ids.py
"""
import argparse
import importlib.util
import json
import statistics
import time

import torch

import dgcn
from dgcn._edge_ids import EdgeIds
from dgcn.loader import NeighborLoader


def load_baseline(path):
    spec = importlib.util.spec_from_file_location('baseline_edge_ids', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EdgeIds


def run(cls, store, batches):
    start = time.perf_counter()
    ids = cls(store)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    out = [ids(n_id, ei) for n_id, ei in batches]
    return setup, (time.perf_counter() - start) / len(batches), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', default='data/small.gcn')
    parser.add_argument('--num-neighbors', default='15,10,5')
    parser.add_argument('--batch-size', type=int, default=1024)
    parser.add_argument('--batches', type=int, default=5)
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--baseline', help='another _edge_ids.py to compare')
    args = parser.parse_args()

    store = dgcn.data.open_store(args.data)
    loader = NeighborLoader(
        store, [int(k) for k in args.num_neighbors.split(',')],
        batch_size=args.batch_size, input_nodes=store.train_index,
        shuffle=True, edge_ids=False)
    it = iter(loader)
    batches = []
    for _ in range(args.batches):
        b = next(it)
        batches.append((b.n_id, b.edge_index.as_tensor()))
    edges = sum(ei.size(1) for _, ei in batches) / len(batches)
    impls = {'current': EdgeIds}
    if args.baseline:
        impls['baseline'] = load_baseline(args.baseline)
    times = {name: ([], []) for name in impls}
    results = {}
    for _ in range(args.repeats):  # alternately: shared-machine noise
        for name, cls in impls.items():
            setup, per_batch, out = run(cls, store, batches)
            times[name][0].append(setup)
            times[name][1].append(per_batch)
            results[name] = out
    if args.baseline:
        for a, b in zip(results['current'], results['baseline']):
            assert torch.equal(a, b), 'the versions give different e_id'
    report = {'data': args.data, 'num_edges': store.num_edges,
              'edges_per_batch': edges, 'batches': args.batches,
              'repeats': args.repeats}
    for name, (setup, per_batch) in times.items():
        report[name] = {'setup_s': statistics.median(setup),
                        'per_batch_s': statistics.median(per_batch)}
    print(json.dumps(report, indent=1))


if __name__ == '__main__':
    main()
