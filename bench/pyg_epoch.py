"""PyG's own DDP epoch on a .gcn store, for bench/python_epoch_bench.py.

The script a PyG user runs today (PyG's examples/multi_gpu recipe):
``torch_geometric.loader.NeighborLoader`` over each rank's slice of the
training nodes, ``torch_geometric.nn`` layers computing every sampled node
(``--model``: ``GCNConv``; ``SAGEConv``; ``GATConv`` with ``--heads`` heads of
``--hidden`` features concatenated, ELU, one output head, as dgcn-train
--model gat), ``F.dropout``, DDP over Gloo. Needs PyG's sampler (pyg-lib or
torch-sparse: PyG 2.8's NeighborLoader raises ImportError without both, it
has no pure-Python sampler). Prints one JSON line per rank with its training
seconds.

    torchrun --nproc-per-node 2 bench/pyg_epoch.py --data data/products.gcn --model sage
"""
import argparse
import json
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GATConv, GCNConv, SAGEConv

import dgcn


class GNN(torch.nn.Module):
    """num_layers convolutions; ReLU (ELU for GAT, as the paper and dgcn-train)
    and dropout between them."""

    def __init__(self, model, in_channels, hidden_channels, out_channels,
                 num_layers=3, dropout=0.5, heads=1):
        super().__init__()
        if model == 'gat':
            sizes = [in_channels] + [hidden_channels * heads] * (num_layers - 1)
            convs = [GATConv(i, hidden_channels, heads) for i in sizes[:-1]]
            convs.append(GATConv(sizes[-1], out_channels, heads=1))
        else:
            conv = GCNConv if model == 'gcn' else SAGEConv
            sizes = [in_channels] + [hidden_channels] * (num_layers - 1)
            convs = [conv(i, o) for i, o in zip(sizes, sizes[1:] + [out_channels])]
        self.convs = torch.nn.ModuleList(convs)
        self.activation = F.elu if model == 'gat' else F.relu
        self.dropout = dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.dropout(self.activation(x), p=self.dropout,
                              training=self.training)
        return x


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', required=True)
    parser.add_argument('--batch-size', type=int, default=1024)
    parser.add_argument('--num-neighbors', default='15,10,5')
    parser.add_argument('--model', choices=['gcn', 'sage', 'gat'],
                        default='gcn')
    parser.add_argument('--hidden', type=int, default=128,
                        help='hidden features (GAT: per head)')
    parser.add_argument('--heads', type=int, default=1,
                        help='--model gat: heads of every hidden layer')
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--workers', type=int, default=0,
                        help="NeighborLoader's worker processes")
    parser.add_argument('--max-batches', type=int, default=0)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    if args.heads != 1 and args.model != 'gat':
        parser.error('--heads is for --model gat')

    dist.init_process_group('gloo')
    rank, world_size = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(args.threads)
    store = dgcn.data.open_store(args.data)
    data = dgcn.data.to_pyg(store)
    data.y = data.y.long()
    # Equal slices, so every rank runs the same number of batches.
    train_idx = store.train_index
    per_rank = train_idx.numel() // world_size
    train_idx = train_idx[rank * per_rank:(rank + 1) * per_rank]
    torch.manual_seed(args.seed)
    loader = NeighborLoader(
        data, input_nodes=train_idx, batch_size=args.batch_size,
        num_neighbors=[int(k) for k in args.num_neighbors.split(',')],
        shuffle=True, num_workers=args.workers)
    model = DistributedDataParallel(
        GNN(args.model, store.num_features, args.hidden, store.num_classes,
            heads=args.heads))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

    model.train()
    start = time.perf_counter()
    for i, batch in enumerate(loader):
        if args.max_batches and i == args.max_batches:
            break
        optimizer.zero_grad()
        out = model(batch.x, batch.edge_index)[:batch.batch_size]
        loss = F.cross_entropy(out, batch.y[:batch.batch_size],
                               ignore_index=-1)
        loss.backward()
        optimizer.step()
    dist.barrier()
    print(json.dumps({'rank': rank, 'model': args.model,
                      'train_s': time.perf_counter() - start,
                      'batches_per_epoch': len(loader)}), flush=True)
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
