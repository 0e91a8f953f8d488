"""dgcn.nn.SAGEConv / GATConv / GCNConv against PyG's on the same batches.

Samples ``--batches`` batches once with ``dgcn.loader.NeighborLoader``
(``--num-neighbors``, ``--batch-size``) from ``--data`` (a ``.gcn`` store,
e.g. ``dgcn-prep synthetic --preset products``), then times, batch by batch
and alternately, one forward and backward pass of a ``len(fanouts)``-layer
model of PyG's layers and of dgcn's with the same weights (ReLU between
layers, no dropout, every layer over every sampled node as PyG's examples
run them, a sum of the seeds' outputs as the loss). The loader's time is
not counted. Prints one JSON object per model: the median milliseconds per
batch of each, and PyG's over ours (above 1: ours faster); and, beside
them, ours with ``trim_to_layer`` (each layer computes only the rows the
next one reads, the seeds' outputs unchanged), what dgcn offers beyond
PyG's layers. With ``--autocast`` both run under
``torch.autocast('cpu', dtype=torch.bfloat16)`` (issue 32: PyG's GCN under
autocast against ours); run it with and without for the ratios.

    python bench/python_conv_bench.py --data data/products.gcn --model gat
    python bench/python_conv_bench.py --model gcn --autocast
"""
import argparse
import contextlib
import json
import statistics
import time

import torch
import torch_geometric.nn as pyg_nn

import dgcn


def build(lib, model, widths, heads):
    layers = []
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        last = i == len(widths) - 2
        if model == 'sage':
            layers.append(lib.SAGEConv(a, b))
        elif model == 'gcn':
            layers.append(lib.GCNConv(a, b))
        else:  # hidden layers: heads concatenated; the last: one head
            in_width = a if i == 0 else a * heads
            layers.append(lib.GATConv(in_width, b, heads=1 if last else
                                      heads))
    return torch.nn.ModuleList(layers)


def step(convs, batch, trim=False):
    h = batch.x
    for i, conv in enumerate(convs):
        if trim:  # dgcn's: only the rows the next layer reads
            ei, _, num_src, num_dst = dgcn.nn.trim_to_layer(
                i, batch.num_sampled_nodes, batch.num_sampled_edges,
                batch.edge_index)
            h = conv(h[:num_src], ei, num_dst=num_dst)
        else:
            h = conv(h, batch.edge_index)
        if i < len(convs) - 1:
            h = h.relu()
    loss = h[:batch.batch_size].sum()
    loss.backward()
    return loss.item()


def timed(convs, batch, trim=False, autocast=False):
    for p in convs.parameters():
        p.grad = None
    context = (torch.autocast('cpu', dtype=torch.bfloat16) if autocast else
               contextlib.nullcontext())
    start = time.perf_counter()
    with context:
        loss = step(convs, batch, trim)
    return time.perf_counter() - start, loss


def run(args, model, batches, num_features):
    widths = [num_features] + [args.hidden] * (len(args.fanouts) - 1)
    widths.append(args.classes)
    torch.manual_seed(args.seed)
    ours = build(dgcn.nn, model, widths, args.heads)
    theirs = build(pyg_nn, model, widths, args.heads)
    theirs.load_state_dict(ours.state_dict())
    t_ours, t_pyg, t_trim, worst = [], [], [], 0.0
    for i, batch in enumerate(batches):
        a, loss_a = timed(ours, batch, autocast=args.autocast)
        b, loss_b = timed(theirs, batch, autocast=args.autocast)
        c, loss_c = timed(ours, batch, trim=True, autocast=args.autocast)
        # The seeds' outputs are the same, trimmed or not, except for GCN,
        # whose normalisation reads the degrees of the trimmed graph.
        for loss in (loss_a,) if model == 'gcn' else (loss_a, loss_c):
            worst = max(worst, abs(loss - loss_b) / max(abs(loss_b), 1e-30))
        if i >= args.warmup:
            t_ours.append(a)
            t_pyg.append(b)
            t_trim.append(c)
    ms_ours = 1e3 * statistics.median(t_ours)
    ms_pyg = 1e3 * statistics.median(t_pyg)
    ms_trim = 1e3 * statistics.median(t_trim)
    # On a shared machine the load drifts: the median of each batch's own
    # ratio (both timed back to back) is steadier than a ratio of medians.
    pairs = statistics.median(b / a for a, b in zip(t_ours, t_pyg))
    return {'model': model, 'autocast_bf16': args.autocast,
            'layers': len(widths) - 1,
            'hidden': args.hidden,
            'heads': args.heads if model == 'gat' else None,
            'batches_timed': len(t_ours),
            'dgcn_ms_per_batch': round(ms_ours, 2),
            'pyg_ms_per_batch': round(ms_pyg, 2),
            'pyg_over_dgcn': round(ms_pyg / ms_ours, 3),
            'pyg_over_dgcn_per_batch_median': round(pairs, 3),
            'dgcn_trimmed_ms_per_batch': round(ms_trim, 2),
            'pyg_over_dgcn_trimmed': round(ms_pyg / ms_trim, 3),
            'loss_max_rel_diff': worst}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', default='data/products.gcn')
    parser.add_argument('--model', choices=['sage', 'gat', 'gcn', 'both'],
                        default='both')
    parser.add_argument('--num-neighbors', default='15,10,5')
    parser.add_argument('--batch-size', type=int, default=1024)
    parser.add_argument('--hidden', type=int, default=64,
                        help='features per layer (per head for GAT)')
    parser.add_argument('--heads', type=int, default=4)
    parser.add_argument('--classes', type=int, default=47)
    parser.add_argument('--batches', type=int, default=8)
    parser.add_argument('--warmup', type=int, default=2)
    parser.add_argument('--threads', type=int, default=2)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--autocast', action='store_true',
                        help='both under torch.autocast bfloat16 (CPU)')
    args = parser.parse_args()
    args.fanouts = [int(k) for k in args.num_neighbors.split(',')]
    if args.batches <= args.warmup:
        parser.error('--batches must exceed --warmup')
    torch.set_num_threads(args.threads)
    store = dgcn.data.open_store(args.data)
    loader = dgcn.loader.NeighborLoader(
        store, num_neighbors=args.fanouts, batch_size=args.batch_size,
        input_nodes=store.train_index, shuffle=True, seed=args.seed)
    batches = []
    for batch in loader:
        batches.append(batch)
        if len(batches) == args.batches:
            break
    models = ['sage', 'gat'] if args.model == 'both' else [args.model]
    common = {'data': args.data, 'num_neighbors': args.fanouts,
              'batch_size': args.batch_size, 'threads': args.threads,
              'device': 'cpu', 'torch': torch.__version__,
              'nodes_per_batch': statistics.mean(b.num_nodes for b in batches),
              'edges_per_batch': statistics.mean(
                  b.edge_index.size(1) for b in batches)}
    for model in models:
        print(json.dumps(dict(common, **run(args, model, batches,
                                            store.num_features))),
              flush=True)


if __name__ == '__main__':
    main()
