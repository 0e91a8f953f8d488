"""Randomised bad inputs for every op (torch.ops.dgcn.*) and every public
function of `dgcn` that takes ids, shapes, dtypes or devices: run by
test_safety.py in a subprocess, so that a crash (a segfault, an abort) fails
that test instead of ending pytest.

Each case takes a valid call, breaks one argument (an id out of range, a
wrong shape, dtype or length, an empty tensor, a non-monotone rowptr, ...)
and requires an exception of the kinds a user can catch (IndexError,
ValueError, TypeError, NotImplementedError, RuntimeError). Cases that stay
valid (non-contiguous or empty but well-formed inputs) must instead give the
dense reference's result. Prints one JSON line: cases run per target, and
every case that neither raised nor matched.

    python tests/python/safety_fuzz.py [--cases N] [--seed S]
"""
import argparse
import json
import random
import sys
import traceback

import torch

import dgcn
from dgcn.loader import NeighborLoader

CAUGHT = (IndexError, ValueError, TypeError, NotImplementedError,
          RuntimeError)


def random_graph(rng, n, m):
    src = torch.tensor([rng.randrange(n) for _ in range(m)],
                       dtype=torch.long)
    dst = torch.tensor([rng.randrange(n) for _ in range(m)],
                       dtype=torch.long)
    return torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])


def dense(rowptr, col, value, num_cols):
    a = torch.zeros(rowptr.numel() - 1, num_cols)
    for r in range(rowptr.numel() - 1):
        for k in range(int(rowptr[r]), int(rowptr[r + 1])):
            a[r, int(col[k])] += float(value[k])
    return a


def big_id(rng, bound):
    return rng.choice([bound, bound + 1, bound + rng.randrange(1, 1000),
                       10**9, 2**31 - 1, 2**31, 2**40, -1, -rng.randrange(
                           2, 1000), -2**31])


def noncontiguous(t):
    # The same values, strided: a column of a wider tensor.
    wide = torch.stack([t, t], dim=-1)
    return wide[..., 0]


class Fuzz:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        torch.manual_seed(seed)
        self.counts = {}
        self.failures = []

    # A case that must raise.
    def bad(self, target, what, call):
        self.counts[target] = self.counts.get(target, 0) + 1
        try:
            call()
        except CAUGHT:
            return
        except Exception as e:  # noqa: BLE001 (an uncaught kind is a finding)
            self.failures.append(f'{target}: {what}: raised {type(e)}: {e}')
            return
        self.failures.append(f'{target}: {what}: no exception')

    # A case that stays valid: it must return what the reference gives.
    def good(self, target, what, call, want):
        self.counts[target] = self.counts.get(target, 0) + 1
        try:
            got = call()
        except Exception:  # noqa: BLE001
            self.failures.append(f'{target}: {what}: raised '
                                 f'{traceback.format_exc(limit=1)}')
            return
        if not torch.allclose(got, want, rtol=1e-5, atol=1e-5):
            self.failures.append(f'{target}: {what}: wrong result')

    def spmm(self):
        rng = self.rng
        n = rng.randrange(1, 12)
        ei = random_graph(rng, n, rng.randrange(0, 20))
        rowptr, col, value = dgcn.nn.gcn_norm(ei, n)
        f = rng.randrange(1, 5)
        x = torch.randn(n, f)
        nnz = col.numel()
        op = torch.ops.dgcn.spmm
        kind = rng.randrange(14)
        if kind == 0:
            c = col.clone()  # int32: ids that fit it
            v = big_id(rng, n)
            c[rng.randrange(nnz)] = v if -2**31 <= v < 2**31 else n
            self.bad('spmm', f'col id out of range {c.tolist()}',
                     lambda: op(rowptr, c, value, x))
        elif kind == 1:
            c = col.long().clone()
            c[rng.randrange(nnz)] = big_id(rng, n)
            self.bad('spmm', 'int64 col id out of range',
                     lambda: op(rowptr, c, value, x))
        elif kind == 2:
            k = rng.randrange(0, n)
            need = int(col.max()) + 1
            if k < need:
                self.bad('spmm', f'x has {k} rows, col needs {need}',
                         lambda: op(rowptr, col, value, x[:k]))
            else:
                self.good('spmm', 'x with extra rows',
                          lambda: op(rowptr, col, value, x[:k]),
                          dense(rowptr, col, value, k) @ x[:k])
        elif kind == 3 and rowptr.numel() > 2:
            r = rowptr.clone()
            i = rng.randrange(1, r.numel() - 1)
            r[i] = r[-1] + rng.randrange(1, 100)
            self.bad('spmm', 'rowptr not monotone',
                     lambda: op(r, col, value, x))
        elif kind == 4:
            r = rowptr.clone()
            r[rng.choice([0, -1])] += rng.choice([-5, -1, 1, 7, 10**9])
            self.bad('spmm', 'rowptr ends off nnz',
                     lambda: op(r, col, value, x))
        elif kind == 5:
            dtype = rng.choice([torch.int32, torch.float32, torch.int16])
            self.bad('spmm', f'rowptr {dtype}',
                     lambda: op(rowptr.to(dtype), col, value, x))
        elif kind == 6:
            dtype = rng.choice([torch.float32, torch.int16, torch.uint8,
                                torch.bool])
            self.bad('spmm', f'col {dtype}',
                     lambda: op(rowptr, col.to(dtype), value, x))
        elif kind == 7:
            dtype = rng.choice([torch.float64, torch.float16, torch.int32])
            self.bad('spmm', f'value {dtype}',
                     lambda: op(rowptr, col, value.to(dtype), x))
        elif kind == 8:
            dtype = rng.choice([torch.float64, torch.int64, torch.bool,
                                torch.float16])
            self.bad('spmm', f'x {dtype}',
                     lambda: op(rowptr, col, value, x.to(dtype)))
        elif kind == 9:
            shape = rng.choice(['x1d', 'x3d', 'rowptr2d', 'col2d', 'short'])
            args = [rowptr, col, value, x]
            if shape == 'x1d':
                args[3] = x.view(-1)
            elif shape == 'x3d':
                args[3] = x.view(n, f, 1)
            elif shape == 'rowptr2d':
                args[0] = rowptr.view(1, -1)
            elif shape == 'col2d':
                args[1] = col.view(1, -1)
            else:
                args[2] = value[:-1] if nnz else torch.ones(1)
            self.bad('spmm', f'shape {shape}', lambda: op(*args))
        elif kind == 10:
            self.bad('spmm', 'empty rowptr',
                     lambda: op(rowptr[:0], col, value, x))
        elif kind == 11:
            self.good('spmm', 'non-contiguous inputs',
                      lambda: op(noncontiguous(rowptr), noncontiguous(col),
                                 noncontiguous(value), x.t().contiguous().t()),
                      dense(rowptr, col, value, n) @ x)
        elif kind == 12:
            empty = torch.zeros(1, dtype=torch.long)
            self.good('spmm', 'empty matrix',
                      lambda: op(empty, col[:0], value[:0], x),
                      torch.zeros(0, f))
        else:
            self.good('spmm', 'row-strided x',
                      lambda: op(rowptr, col, value,
                                 torch.cat([x, x], 1)[:, :f]),
                      dense(rowptr, col, value, n) @ x)

    def spmm_transposed(self):
        rng = self.rng
        n = rng.randrange(1, 12)
        ei = random_graph(rng, n, rng.randrange(0, 20))
        rowptr, col, value = dgcn.nn.gcn_norm(ei, n)
        dy = torch.randn(n, rng.randrange(1, 4))
        op = torch.ops.dgcn.spmm_transposed
        kind = rng.randrange(5)
        if kind == 0:
            k = rng.choice([int(col.max()), -1, -10**9])
            self.bad('spmm_transposed', f'num_cols = {k}',
                     lambda: op(rowptr, col, value, dy, k))
        elif kind == 1:
            rows = n + rng.choice([-1, 1, 5]) if n > 1 else 3
            self.bad('spmm_transposed', f'dy of {rows} rows',
                     lambda: op(rowptr, col, value, torch.randn(rows, 2), n))
        elif kind == 2:
            dtype = rng.choice([torch.float64, torch.int64, torch.bool])
            self.bad('spmm_transposed', f'dy {dtype}',
                     lambda: op(rowptr, col, value, dy.to(dtype), n))
        elif kind == 3:
            c = col.long().clone()
            c[rng.randrange(c.numel())] = big_id(rng, n)
            self.bad('spmm_transposed', 'col id out of range',
                     lambda: op(rowptr, c, value, dy, n))
        else:
            self.good('spmm_transposed', 'non-contiguous dy',
                      lambda: op(rowptr, col, value, dy.t().contiguous().t(),
                                 n),
                      dense(rowptr, col, value, n).t() @ dy)

    def gcn_norm(self):
        rng = self.rng
        n = rng.randrange(1, 12)
        ei = random_graph(rng, n, rng.randrange(1, 20))
        op = dgcn.nn.gcn_norm
        kind = rng.randrange(10)
        if kind == 0:
            e = ei.clone()
            e[rng.randrange(2), rng.randrange(e.size(1))] = big_id(rng, n)
            self.bad('gcn_norm', 'edge id out of range', lambda: op(e, n))
        elif kind == 1:
            dtype = rng.choice([torch.int32, torch.float32, torch.uint8])
            self.bad('gcn_norm', f'edge_index {dtype}',
                     lambda: op(ei.to(dtype), n))
        elif kind == 2:
            shape = rng.choice([(1, -1), (-1, ), (4, -1)])
            e = ei.reshape(*shape) if shape != (4, -1) else torch.cat([ei,
                                                                        ei])
            self.bad('gcn_norm', f'edge_index shape {tuple(e.shape)}',
                     lambda: op(e, n))
        elif kind == 3:
            self.bad('gcn_norm', 'num_nodes too small',
                     lambda: op(ei, int(ei.max())))
        elif kind == 4:
            self.bad('gcn_norm', 'num_nodes negative or huge',
                     lambda: op(ei, rng.choice([-1, -10**9, 2**31, 2**62])))
        elif kind == 5:
            self.bad('gcn_norm', 'num_dst past num_nodes',
                     lambda: op(ei, n, None, n + rng.randrange(1, 10)))
        elif kind == 6:
            self.bad('gcn_norm', 'num_dst negative',
                     lambda: op(ei, n, None, -rng.randrange(1, 10)))
        elif kind == 7:
            deg = torch.ones(n + rng.choice([-1, 1, 5]), dtype=torch.long)
            self.bad('gcn_norm', 'deg wrong length',
                     lambda: op(ei, n, deg))
        elif kind == 8:
            dtype = rng.choice([torch.float32, torch.bool, torch.float64])
            self.bad('gcn_norm', f'deg {dtype}',
                     lambda: op(ei, n, torch.ones(n, dtype=dtype)))
        else:
            # int32 (a batch's deg, read in place) or int64 (converted)
            if rng.random() < 0.5:
                deg = torch.ones(n, dtype=torch.int)
                deg[rng.randrange(n)] = rng.choice([-1, -10**9])
            else:
                deg = torch.ones(n, dtype=torch.long)
                deg[rng.randrange(n)] = rng.choice([-1, -10**9, 2**40])
            self.bad('gcn_norm', 'deg not a degree', lambda: op(ei, n, deg))

    def relu_dropout(self):
        rng = self.rng
        x = torch.randn(rng.randrange(0, 6), 3)
        kind = rng.randrange(3)
        if kind == 0:
            p = rng.choice([-0.1, 1.0, 1.5, float('nan'), float('inf')])
            self.bad('relu_dropout', f'p = {p}',
                     lambda: torch.ops.dgcn.relu_dropout(x, p, True))
        elif kind == 1:
            dtype = rng.choice([torch.int64, torch.bool, torch.int32])
            self.bad('relu_dropout', f'x {dtype}',
                     lambda: torch.ops.dgcn.relu_dropout(x.to(dtype), 0.5,
                                                         True))
        else:
            self.good('relu_dropout', 'non-contiguous x, eval',
                      lambda: torch.ops.dgcn.relu_dropout(x.t(), 0.5, False),
                      x.t().relu())

    def gcnconv(self):
        rng = self.rng
        n = rng.randrange(2, 12)
        ei = random_graph(rng, n, rng.randrange(1, 20))
        conv = dgcn.nn.GCNConv(3, 2)
        x = torch.randn(n, 3)
        kind = rng.randrange(10)
        if kind == 0:
            big = torch.randn(rng.randrange(1, 30), 3)
            n_id = torch.tensor([rng.randrange(big.size(0)) for _ in range(n)])
            n_id[rng.randrange(n)] = big_id(rng, big.size(0))
            self.bad('GCNConv', f'n_id {n_id.tolist()} out of x rows',
                     lambda: conv(big, ei, n_id=n_id))
        elif kind == 1:
            e = ei.clone()
            e[rng.randrange(2), rng.randrange(e.size(1))] = big_id(rng, n)
            opts = rng.choice([{}, {'improved': True}, {'normalize': False},
                               {'add_self_loops': False}])
            c = dgcn.nn.GCNConv(3, 2, **opts)
            self.bad('GCNConv', f'edge id out of range, {opts}',
                     lambda: c(x, e))
        elif kind == 2:
            self.bad('GCNConv', 'x wrong width',
                     lambda: conv(torch.randn(n, rng.choice([1, 2, 4])), ei))
        elif kind == 3:
            dtype = rng.choice([torch.float64, torch.int64, torch.float16])
            self.bad('GCNConv', f'x {dtype}', lambda: conv(x.to(dtype), ei))
        elif kind == 4:
            w = torch.rand(ei.size(1) + rng.choice([-1, 1, 3]))
            self.bad('GCNConv', 'edge_weight wrong length',
                     lambda: conv(x, ei, w))
        elif kind == 5:
            self.bad('GCNConv', 'int edge_weight (deg passed positionally)',
                     lambda: conv(x, ei, torch.ones(ei.size(1),
                                                    dtype=torch.long)))
        elif kind == 6:
            self.bad('GCNConv', 'num_dst out of range',
                     lambda: conv(x, ei, num_dst=rng.choice([-1, n + 1])))
        elif kind == 7:
            c = dgcn.nn.GCNConv(3, 2, cached=True)
            c(x, ei)
            other = random_graph(rng, n + 1, ei.size(1) // 2 + 1)
            self.bad('GCNConv', 'cached, then another graph',
                     lambda: c(torch.randn(n + 1, 3), other))
        elif kind == 8:
            dtype = rng.choice([torch.int32, torch.float32])
            self.bad('GCNConv', f'edge_index {dtype}',
                     lambda: conv(x, ei.to(dtype)))
        else:
            want = conv(x, ei)
            self.good('GCNConv', 'non-contiguous x and edge_index',
                      lambda: conv(x.t().contiguous().t(),
                                   noncontiguous(ei)), want)

    def loader_and_data(self, store, data):
        rng = self.rng
        n = store.num_nodes
        kind = rng.randrange(11)
        if kind == 0:
            nodes = torch.tensor([0, big_id(rng, n)])
            self.bad('NeighborLoader', 'input_nodes out of range',
                     lambda: NeighborLoader(store, [2], input_nodes=nodes))
        elif kind == 1:
            self.bad('NeighborLoader', 'bad num_neighbors', lambda:
                     NeighborLoader(store, rng.choice([[], [-2], [1.5], 3])))
        elif kind == 2:
            self.bad('NeighborLoader', 'bad batch_size', lambda:
                     NeighborLoader(store, [2], batch_size=rng.choice(
                         [0, -1, 1.5])))
        elif kind == 3:
            arg = rng.choice([('disjoint', True), ('subgraph_type', 'induced'),
                              ('weight_attr', 'w'), ('input_time', 1),
                              ('time_attr', 't'), ('directed', False),
                              ('collate_fn', print), ('generator', 1)])
            self.bad('NeighborLoader', f'unsupported {arg}', lambda:
                     NeighborLoader(store, [2], **{arg[0]: arg[1]}))
        elif kind == 4:
            mask = torch.ones(n + rng.choice([-1, 1]), dtype=torch.bool)
            self.bad('NeighborLoader', 'mask of wrong length',
                     lambda: NeighborLoader(store, [2], input_nodes=mask))
        elif kind == 5:
            e = data.edge_index.clone()
            e[rng.randrange(2), rng.randrange(e.size(1))] = big_id(rng, n)
            from torch_geometric.data import Data
            self.bad('from_pyg', 'edge id out of range', lambda: dgcn.data.
                     from_pyg(Data(edge_index=e, num_nodes=n)))
        elif kind == 6:
            from torch_geometric.data import Data
            y = torch.zeros(n + rng.choice([-1, 1]), dtype=torch.long)
            self.bad('from_pyg', 'y wrong length', lambda: dgcn.data.from_pyg(
                Data(edge_index=data.edge_index, y=y, num_nodes=n)))
        elif kind == 7:
            begin = rng.randrange(-5, n + 5)
            end = rng.choice([begin - 1, n + 1, n + 10**9])
            self.bad('Store.adjacency_rows', f'[{begin}, {end})',
                     lambda: store.adjacency_rows(begin, end))
        elif kind == 8:
            width = rng.choice([1, 5])  # convs[1] never takes convs[0]'s 2
            convs = [dgcn.nn.GCNConv(3, 2), dgcn.nn.GCNConv(width, 2)]
            x = torch.randn(n + rng.choice([0, 0, -1, 1]), rng.choice([3, 4]))
            self.bad('layerwise_inference', f'x {tuple(x.shape)}, widths '
                     f'3 -> 2, {width} -> 2', lambda: dgcn.nn.
                     layerwise_inference(convs, x, store))
        elif kind == 9:
            rank, world = rng.choice([(2, 2), (-1, 2), (0, 0), (5, 3)])
            self.bad('plan_epoch', f'rank {rank} of {world}', lambda: dgcn._C.
                     plan_epoch(torch.arange(n), 0, 0, rank, world, 4))
        else:
            self.bad('trim_to_layer', 'layer out of range',
                     lambda: dgcn.nn.trim_to_layer(
                         rng.choice([-1, 2, 5]), [2, 3, 4], [4, 5],
                         torch.zeros(2, 9, dtype=torch.long)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cases', type=int, default=2000)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args()
    fuzz = Fuzz(args.seed)
    from torch_geometric.data import Data
    rng = fuzz.rng
    n = 30
    data = Data(edge_index=random_graph(rng, n, 60), x=torch.randn(n, 4),
                y=torch.randint(0, 3, (n, )), num_nodes=n)
    store = dgcn.data.from_pyg(data)
    targets = [fuzz.spmm, fuzz.spmm_transposed, fuzz.gcn_norm,
               fuzz.relu_dropout, fuzz.gcnconv,
               lambda: fuzz.loader_and_data(store, data)]
    weights = [4, 1, 3, 1, 3, 2]
    for _ in range(args.cases):
        rng.choices(targets, weights)[0]()
    print(json.dumps({'cases': sum(fuzz.counts.values()),
                      'per_target': fuzz.counts,
                      'failures': fuzz.failures[:50],
                      'num_failures': len(fuzz.failures)}))
    return 1 if fuzz.failures else 0


if __name__ == '__main__':
    sys.exit(main())
