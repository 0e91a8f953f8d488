"""PyG's own DDP epoch on a .gcn store, for bench/python_epoch_bench.py.

The script a PyG user runs today (PyG's examples/multi_gpu recipe):
``torch_geometric.loader.NeighborLoader`` over each rank's slice of the
training nodes, ``torch_geometric.nn.GCNConv`` layers computing every sampled
node, ``F.dropout``, DDP over Gloo. Needs PyG's sampler (pyg-lib or
torch-sparse). Prints one JSON line per rank with its training seconds.

    torchrun --nproc-per-node 2 bench/pyg_epoch.py --data data/products.gcn
"""
import argparse
import json
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import GCNConv

import dgcn


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels,
                 num_layers=3, dropout=0.5):
        super().__init__()
        sizes = [in_channels] + [hidden_channels] * (num_layers - 1)
        self.convs = torch.nn.ModuleList(
            GCNConv(i, o) for i, o in zip(sizes, sizes[1:] + [out_channels]))
        self.dropout = dropout

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.dropout(x.relu(), p=self.dropout, training=self.training)
        return x


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', required=True)
    parser.add_argument('--batch-size', type=int, default=1024)
    parser.add_argument('--num-neighbors', default='15,10,5')
    parser.add_argument('--hidden', type=int, default=128)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--workers', type=int, default=0,
                        help="NeighborLoader's worker processes")
    parser.add_argument('--max-batches', type=int, default=0)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()

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
        GCN(store.num_features, args.hidden, store.num_classes))
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
    print(json.dumps({'rank': rank, 'train_s': time.perf_counter() - start,
                      'batches_per_epoch': len(loader)}), flush=True)
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
