"""Distributed GCN training, the PyTorch Geometric way, on dgcn's C++ engine.

PyG's DDP recipe (``torch_geometric.loader.NeighborLoader`` + ``GCNConv`` +
``DistributedDataParallel``) with two imports changed: the loader samples on
dgcn's C++ threads (each rank its own seeds, equal batch counts), the layers
multiply with dgcn's SpMM.

    torchrun --nproc-per-node 2 examples/gcn_ddp.py --data data/cora.gcn

Beyond the import, three habits of dgcn-train make the epoch as fast as
its: each layer computes only the nodes the next one reads
(``dgcn.nn.trim_to_layer``), ReLU and dropout are one pass
(``dgcn.nn.relu_dropout``), and freed activations are reused
(``dgcn.enable_cpu_cache``); ``--read-store`` also lets the first layer read
the store's feature rows instead of a copy in every batch. Evaluation is
exact, layer by layer over the whole graph (``dgcn.nn.layerwise_inference``).

Each rank prints one JSON line (and with ``--out DIR`` writes
``DIR/rank-R.json``): test accuracy and a checksum of its parameters, equal on
every rank.
"""
import argparse
import hashlib
import json
import os
import resource
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import dgcn
from dgcn.loader import NeighborLoader
from dgcn.nn import GCNConv, relu_dropout, trim_to_layer


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels,
                 num_layers=3, dropout=0.5):
        super().__init__()
        sizes = [in_channels] + [hidden_channels] * (num_layers - 1)
        self.convs = torch.nn.ModuleList(
            GCNConv(i, o) for i, o in zip(sizes, sizes[1:] + [out_channels]))
        self.dropout = dropout

    def forward(self, x, edge_index, deg=None, num_sampled_nodes=None,
                num_sampled_edges=None, n_id=None):
        for i, conv in enumerate(self.convs):
            if num_sampled_nodes is None:  # the full graph
                x = conv(x, edge_index, deg=deg)
            else:  # a batch: each layer computes only what the next reads
                ei, d, _, num_dst = trim_to_layer(
                    i, num_sampled_nodes, num_sampled_edges, edge_index, deg)
                # n_id: the first layer reads its rows of the store's x
                x = conv(x, ei, deg=d, num_dst=num_dst,
                         n_id=n_id if i == 0 else None)
            if i < len(self.convs) - 1:
                # F.dropout(x.relu(), ...) in one pass
                x = relu_dropout(x, p=self.dropout, training=self.training)
        return x


@torch.no_grad()
def test(model, store, device):
    # Every node with every neighbour, layer by layer over the whole graph
    # (PyG's `model.inference(...)` pattern, exact rather than sampled).
    model.eval()
    out = dgcn.nn.layerwise_inference(model.convs, store.x.to(device), store)
    pred = out.argmax(dim=-1).cpu()
    y = store.labels.long()
    return [float((pred[idx] == y[idx]).float().mean())
            for idx in (store.train_index, store.val_index, store.test_index)]


def process_usage():
    # (CPU seconds, of them in the kernel, minor page faults) of every
    # thread of this process so far.
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_stime, r.ru_minflt


def param_checksum(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def cache_peak_bytes():
    stats = dgcn.cpu_cache_stats()
    return stats['peak_mapped_bytes'] if stats['installed'] else None


def wait_at_start_gate(gate, timeout_s=600):
    """--start-gate (dgcn-train's protocol, train/start_gate.h): announce
    this process with GATE.ready.<pid>, wait until GATE exists, then remove
    GATE.ready.<pid>, so that a bench starting two programs together starts
    their first epochs at the same moment."""
    ready = f'{gate}.ready.{os.getpid()}'
    open(ready, 'w').close()
    deadline = time.monotonic() + timeout_s
    try:
        while not os.path.exists(gate):
            if time.monotonic() > deadline:
                raise SystemExit(f'--start-gate {gate}: not opened within '
                                 f'{timeout_s} s')
            time.sleep(0.001)
    finally:  # counted once the gate is open (or never)
        os.remove(ready)


def run(args):
    device = torch.device(args.device)
    if args.read_store and device.type != 'cpu':
        raise SystemExit('gcn_ddp.py: --read-store reads the store on the CPU;'
                         ' on a GPU the batches carry their features')
    backend = 'nccl' if device.type == 'cuda' else 'gloo'
    dist.init_process_group(backend)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    if device.type == 'cuda':
        device = torch.device('cuda', int(os.environ.get('LOCAL_RANK', 0)))
        torch.cuda.set_device(device)
    torch.set_num_threads(args.threads)
    if device.type == 'cpu' and args.cpu_cache_gb > 0:
        dgcn.enable_cpu_cache(int(args.cpu_cache_gb * (1 << 30)))

    # The ranks of one machine map one decompressed copy of the store (as
    # dgcn-train --load auto does) rather than each decoding its own.
    local_ranks = int(os.environ.get('LOCAL_WORLD_SIZE', 1))
    shared = args.load == 'shared' or (args.load == 'auto' and local_ranks > 1)
    store = dgcn.data.open_store(args.data, mmap=shared,
                                 num_threads=args.threads,
                                 cache_dir=args.cache_dir)
    # rank and world_size come from torch.distributed.
    train_loader = NeighborLoader(store, num_neighbors=args.num_neighbors,
                                  batch_size=args.batch_size,
                                  input_nodes=store.train_index, shuffle=True,
                                  seed=args.seed, num_workers=args.workers,
                                  gather_features=not args.read_store)

    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = GCN(store.num_features, args.hidden, store.num_classes).to(device)
    model = DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    if args.start_gate:
        wait_at_start_gate(args.start_gate)
    epoch_s = []  # training seconds of each epoch (the first pays warm-up)
    epoch_end_time = []  # when each ended, Unix seconds (dgcn-train: end_time)
    # What this process used in each, every thread: CPU seconds, the
    # kernel's share, minor page faults (dgcn-train: cpu_s, system_s,
    # minor_faults)
    epoch_cpu_s, epoch_system_s, epoch_minor_faults = [], [], []
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loader.set_epoch(epoch)
        total_loss = 0.0
        start, used = time.perf_counter(), process_usage()
        for i, batch in enumerate(train_loader):
            if args.max_batches and i == args.max_batches:
                break
            batch = batch.to(device)
            optimizer.zero_grad()
            if args.read_store:  # the first layer reads the store's rows
                out = model(store.x, batch.edge_index, batch.deg,
                            batch.num_sampled_nodes, batch.num_sampled_edges,
                            batch.n_id)
            else:
                out = model(batch.x, batch.edge_index, batch.deg,
                            batch.num_sampled_nodes, batch.num_sampled_edges)
            out = out[:batch.batch_size]
            loss = F.cross_entropy(out, batch.y[:batch.batch_size],
                                   ignore_index=-1)
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        dist.barrier()
        epoch_s.append(time.perf_counter() - start)
        epoch_end_time.append(time.time())
        cpu_s, system_s, faults = (b - a for a, b in
                                   zip(used, process_usage()))
        epoch_cpu_s.append(cpu_s)
        epoch_system_s.append(system_s)
        epoch_minor_faults.append(faults)
        if rank == 0 and not args.no_eval:
            train_acc, val_acc, test_acc = test(model.module, store, device)
            print(f'epoch {epoch:03d} loss {total_loss / len(train_loader):.4f}'
                  f' train {train_acc:.4f} val {val_acc:.4f} '
                  f'test {test_acc:.4f}', flush=True)
        dist.barrier()

    train_acc, val_acc, test_acc = (None, None, None) if args.no_eval else \
        test(model.module, store, device)
    result = {'rank': rank, 'world_size': world_size,
              'batches_per_epoch': len(train_loader), 'test_acc': test_acc,
              'val_acc': val_acc, 'train_s': sum(epoch_s), 'epoch_s': epoch_s,
              'epoch_end_time': epoch_end_time, 'epoch_cpu_s': epoch_cpu_s,
              'epoch_system_s': epoch_system_s,
              'epoch_minor_faults': epoch_minor_faults,
              'param_checksum': param_checksum(model),
              # The most memory dgcn.enable_cpu_cache's blocks held (None
              # without it), as dgcn-train's memory.cpu_cache_peak_mapped_bytes:
              # bench/python_epoch_bench.py compares the two.
              'cpu_cache_peak_mapped_bytes': cache_peak_bytes()}
    print(json.dumps(result), flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f'rank-{rank}.json'), 'w') as f:
            json.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', required=True, help='a .gcn store')
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--batch-size', type=int, default=1024)
    parser.add_argument('--num-neighbors', type=lambda s: [int(k) for k in
                                                           s.split(',')],
                        default=[15, 10, 5])
    parser.add_argument('--hidden', type=int, default=128)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--workers', type=int, default=1,
                        help='C++ sampler threads per rank')
    parser.add_argument('--threads', type=int, default=1,
                        help='torch threads per rank')
    parser.add_argument('--max-batches', type=int, default=0,
                        help='train only the first N batches of every epoch '
                        '(timing runs; 0: all)')
    parser.add_argument('--no-eval', action='store_true',
                        help='skip the full-graph evaluation (timing runs)')
    parser.add_argument('--read-store', action='store_true',
                        help='no feature rows in the batches: the first '
                        'layer reads them from the store (as dgcn-train '
                        'does on the CPU)')
    parser.add_argument('--cpu-cache-gb', type=float, default=4.0,
                        help='freed large CPU tensors kept for reuse '
                        '(dgcn.enable_cpu_cache; 0: torch\'s allocator)')
    parser.add_argument('--load', choices=['auto', 'private', 'shared'],
                        default='auto',
                        help="as dgcn-train's --load: private: every rank "
                        'decompresses its own copy; shared: the ranks of a '
                        'machine map one decompressed cache file; auto: '
                        'shared when a machine runs more than one rank')
    parser.add_argument('--cache-dir',
                        help='where several ranks of a machine keep the one '
                        'expanded copy of a compressed store they share '
                        '(default: next to it)')
    parser.add_argument('--start-gate', metavar='FILE',
                        help='timing runs: wait before the first epoch '
                        'until FILE exists, having created FILE.ready.<pid> '
                        '(as dgcn-train --start-gate)')
    parser.add_argument('--device', default='cpu')
    parser.add_argument('--out', help='write rank-R.json files here')
    run(parser.parse_args())
