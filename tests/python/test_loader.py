"""dgcn.loader.NeighborLoader: PyG's batch conventions, checked as
invariants against the graph, determinism and the per-rank split."""
import pytest
import torch
from conftest import _prep_binary

import dgcn
from dgcn.loader import NeighborLoader


def _row_sets(store):
    rowptr, col = store.rowptr.tolist(), store.col.tolist()
    return [set(col[rowptr[v]:rowptr[v + 1]]) for v in range(store.num_nodes)]


def _check_batch(batch, store, rows, fanouts, seeds=None):
    n_id, ei = batch.n_id, batch.edge_index
    n = n_id.numel()
    assert batch.num_nodes == n
    assert n_id.unique().numel() == n, 'n_id repeats a node'
    if seeds is not None:
        assert torch.equal(n_id[:batch.batch_size], seeds), 'seeds first'
    assert sum(batch.num_sampled_nodes) == n
    assert batch.num_sampled_nodes[0] == batch.batch_size
    assert len(batch.num_sampled_nodes) == len(fanouts) + 1
    assert len(batch.num_sampled_edges) == len(fanouts)
    assert sum(batch.num_sampled_edges) == ei.size(1)
    assert ei.dtype == torch.long and ei.dim() == 2 and ei.size(0) == 2
    assert int(ei.min()) >= 0 and int(ei.max()) < n, 'edge_index is local'
    # Every sampled edge is an edge of the graph: source in the target's row.
    src, dst = n_id[ei[0]].tolist(), n_id[ei[1]].tolist()
    for s, d in zip(src, dst):
        assert s in rows[d], f'edge {s} -> {d} is not in the graph'
    assert len(set(zip(src, dst))) == len(src), 'an edge sampled twice'
    # Hop by hop: the edges of hop h point to the nodes first reached at
    # hop h, each with min(fanout, degree) of its neighbours.
    bounds = torch.tensor([0] + batch.num_sampled_nodes).cumsum(0)
    ebounds = torch.tensor([0] + batch.num_sampled_edges).cumsum(0)
    counts = torch.bincount(ei[1], minlength=n)
    degree = store.degree.long()[n_id]
    for h, k in enumerate(fanouts):
        targets = ei[1, ebounds[h]:ebounds[h + 1]]
        if targets.numel():
            assert int(targets.min()) >= bounds[h]
            assert int(targets.max()) < bounds[h + 1]
        hop = slice(int(bounds[h]), int(bounds[h + 1]))
        want = degree[hop] if k < 0 else degree[hop].clamp(max=k)
        assert torch.equal(counts[hop], want)
    # Nodes of the last hop are not expanded.
    assert int(counts[int(bounds[-2]):].sum()) == 0
    # Node features and labels are sliced by n_id.
    assert torch.equal(batch.x, store.x[n_id])
    assert torch.equal(batch.y, store.labels.long()[n_id])
    assert torch.equal(batch.deg, store.degree[n_id])
    for key, index in (('train_mask', store.train_index),
                       ('val_mask', store.val_index),
                       ('test_mask', store.test_index)):
        mask = torch.zeros(store.num_nodes, dtype=torch.bool)
        mask[index] = True
        assert torch.equal(batch[key], mask[n_id]), key
    batch.validate(raise_on_error=True)


def test_batches_follow_pyg_conventions(cora_store):
    rows = _row_sets(cora_store)
    fanouts = [5, 3]
    loader = NeighborLoader(cora_store, num_neighbors=fanouts, batch_size=64,
                            input_nodes=cora_store.train_index, seed=3,
                            shuffle=True)
    plan = dgcn._C.plan_epoch(cora_store.train_index, 3, 0, 0, 1, 64, True)
    batches = list(loader)
    assert len(batches) == len(loader) == len(plan) == 3
    for batch, seeds in zip(batches, plan):
        _check_batch(batch, cora_store, rows, fanouts, seeds)
    seen = torch.cat([b.n_id[:b.batch_size] for b in batches])
    assert torch.equal(seen.sort().values, cora_store.train_index)


def test_full_neighbourhood(cora_store):
    rows = _row_sets(cora_store)
    loader = NeighborLoader(cora_store, num_neighbors=[-1, -1],
                            batch_size=100, shuffle=False)
    batch = next(iter(loader))
    _check_batch(batch, cora_store, rows, [-1, -1])
    # Exact: the seeds' sampled neighbourhoods are their whole rows.
    ei, n_id = batch.edge_index, batch.n_id
    for i in range(batch.batch_size):
        got = set(n_id[ei[0, ei[1] == i]].tolist())
        assert got == rows[int(n_id[i])]


def _epoch(loader):
    return [(b.n_id.clone(), b.edge_index.clone()) for b in loader]


def _same(a, b):
    return len(a) == len(b) and all(
        torch.equal(x[0], y[0]) and torch.equal(x[1], y[1])
        for x, y in zip(a, b))


def test_deterministic_whatever_the_workers(cora_store):
    kwargs = dict(num_neighbors=[10, 5], batch_size=128, seed=7,
                  input_nodes=cora_store.test_index)
    one = NeighborLoader(cora_store, num_workers=1, **kwargs)
    four = NeighborLoader(cora_store, num_workers=4, prefetch=2, **kwargs)
    e0, e1 = _epoch(one), _epoch(one)
    assert _same(e0, _epoch(four))
    assert _same(e1, _epoch(four))
    assert not _same(e0, e1), 'epochs must differ'
    one.set_epoch(0)
    assert _same(_epoch(one), e0)
    other = NeighborLoader(cora_store, num_workers=1,
                           **{**kwargs, 'seed': 8})
    assert not _same(_epoch(other), e0), 'seeds must differ'


def test_ranks_split_the_seeds(cora_store):
    nodes = cora_store.train_index  # 140 nodes over 3 ranks: 47 each
    world = 3
    loaders = [NeighborLoader(cora_store, num_neighbors=[4], batch_size=10,
                              input_nodes=nodes, rank=r, world_size=world)
               for r in range(world)]
    seeds = []
    for loader in loaders:
        loader.set_epoch(2)
        batches = list(loader)
        assert len(batches) == len(loader) == 5  # ceil(47 / 10), all ranks
        seeds.append(torch.cat([b.n_id[:b.batch_size] for b in batches]))
    assert all(s.numel() == 47 for s in seeds)
    everything = torch.cat(seeds)
    assert set(everything.tolist()) == set(nodes.tolist())
    # Padding: 141 - 140 = 1 node is trained twice, nothing else repeats.
    assert everything.numel() - everything.unique().numel() == 1
    for r in range(world):
        for q in range(r + 1, world):
            shared = set(seeds[r].tolist()) & set(seeds[q].tolist())
            assert len(shared) <= 1


def test_pyg_data_input(small_data):
    loader = NeighborLoader(small_data, num_neighbors=[2, 2], batch_size=3,
                            input_nodes=small_data.train_mask, shuffle=False)
    store = loader.store
    rows = _row_sets(store)
    batches = list(loader)
    assert len(batches) == 2
    for b in batches:
        _check_batch(b, store, rows, [2, 2])
        assert torch.equal(b.x, small_data.x[b.n_id])
        assert torch.equal(b.y, small_data.y[b.n_id])
    assert torch.equal(torch.cat([b.n_id[:b.batch_size] for b in batches]),
                       torch.arange(4))


def test_abandoned_iteration_restarts_cleanly(cora_store):
    loader = NeighborLoader(cora_store, num_neighbors=[5, 5], batch_size=32,
                            shuffle=False)
    it = iter(loader)
    next(it)
    loader.set_epoch(0)
    full = list(loader)
    assert len(full) == len(loader)
    del loader, it  # workers stop without hanging


def test_batch_memory_is_reused_once_the_loop_drops_a_batch(cora_store):
    # The C++ loader's pools (sampling/batch_memory.h) make a fresh buffer
    # for every batch a loop keeps, and reuse those of dropped batches.
    def buffers_created(keep):
        loader = NeighborLoader(cora_store, num_neighbors=[5, 5],
                                batch_size=16, shuffle=False)
        it = iter(loader)
        cpp = it.cpp
        kept = []
        for batch in it:  # a PyG loop: `batch` lives while the next is made
            if keep:
                kept.append(batch)
        stats = cpp.stats()
        assert stats['batches'] == len(loader)
        return (stats['batches'], stats['feature_buffers_created'],
                stats['index_buffers_created'])

    num_batches, feature, index = buffers_created(keep=True)
    assert num_batches >= 8 and feature == index == num_batches
    num_batches, feature, index = buffers_created(keep=False)
    assert 1 <= feature < num_batches and 1 <= index < num_batches


_PYG_IMPORT = '''
import sys
import dgcn
from dgcn.loader import NeighborLoader
assert 'torch_geometric' not in sys.modules, 'import dgcn imported PyG'
store = dgcn.data.open_store(sys.argv[1])
loader = NeighborLoader(store, num_neighbors=[2], batch_size=8)
assert 'torch_geometric' in sys.modules, 'the loader left PyG to batch 0'
before = set(sys.modules)
next(iter(loader))
new = sorted(m for m in set(sys.modules) - before if 'torch_geometric' in m)
assert not new, new
print('ok')
'''


def test_pyg_is_imported_with_the_loader_not_in_its_first_batch(cora_path):
    # PyG's import (~1.3 s) in the first batch stalled the first epoch.
    import subprocess
    import sys
    out = subprocess.run([sys.executable, '-c', _PYG_IMPORT, str(cora_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == 'ok', out.stderr


_INDEX_MEMORY = '''
import sys, dgcn
from dgcn.loader import NeighborLoader
dgcn.enable_cpu_cache(1 << 30)
store = dgcn.data.open_store(sys.argv[1])
loader = NeighborLoader(store, num_neighbors=[10, 10], batch_size=1024,
                        input_nodes=store.train_index)
start = dgcn.cpu_cache_stats()
it = iter(loader)
cpp, largest, batches = it.cpp, 0, 0
for batch in it:  # a PyG loop: `batch` lives while the next is made
    largest = max(largest, batch.n_id.numel() * 8 + batch.edge_index.numel()
                  * 8 + batch.y.numel() * 8)
    batches += 1
end = dgcn.cpu_cache_stats()
assert batches >= 10 and largest > 1 << 20, (batches, largest)
assert cpp.stats()['index_buffers_created'] == 0, cpp.stats()
served = end['large_allocations'] - start['large_allocations']
assert served >= batches, (served, batches, end)
# Two batches live at once: a block each (and one grown for a larger
# batch), reused from then on, not one block a batch.
assert end['reused'] - start['reused'] >= batches - 3, (start, end)
block = 2 * largest + (2 << 20)  # largest counts ~2/3 of a buffer; 2 MiB
assert end['peak_mapped_bytes'] - start['mapped_bytes'] <= 3 * block, (
    start, end, largest)
print('ok')
'''


def test_index_arrays_take_the_cpu_cache_s_blocks(tmp_path):
    # Note [Index memory] (python/src/loader.h): with dgcn.enable_cpu_cache,
    # a batch's n_id, edge_index, ... come from the cache, reused batch after
    # batch, rather than from a pool of the loader's own.
    import subprocess
    import sys
    prep = _prep_binary()
    if prep is None:
        pytest.skip('no dgcn-prep binary (build the C++ first)')
    path = tmp_path / 'g.gcn'
    subprocess.run([prep, 'synthetic', '--preset', 'small', '--num-nodes',
                    '200000', '--mean-degree', '10', '--num-features', '0',
                    '--train-fraction', '0.1', '--valid-fraction', '0.01',
                    '--test-fraction', '0.01', '--out', str(path),
                    '--threads', '2'], check=True, capture_output=True)
    out = subprocess.run([sys.executable, '-c', _INDEX_MEMORY, str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == 'ok', out.stderr
