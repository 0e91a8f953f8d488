"""dgcn.loader.NeighborLoader with PyG's defaults and semantics: the
defaults that change results are PyG's, each iter() is independent, batches
carry input_id and the input's node attributes, transform= is applied, and
PyG's other arguments are supported or refused by name. PyG's own sampler
cannot run here (no pyg-lib / torch-sparse), so its batches are rebuilt
from their definition where a test needs them."""
import inspect

import pytest
import torch
import torch.nn.functional as F
import torch_geometric.nn as pyg_nn
from torch_geometric.data import Data

import dgcn
from dgcn.loader import NeighborLoader


def test_defaults_are_pygs():
    from torch.utils.data import DataLoader
    ours = inspect.signature(NeighborLoader).parameters
    theirs = inspect.signature(DataLoader).parameters
    for name in ('batch_size', 'num_workers', 'drop_last', 'pin_memory'):
        assert ours[name].default == theirs[name].default, name
    assert ours['shuffle'].default is False  # DataLoader's None: no shuffle
    assert not theirs['shuffle'].default
    from torch_geometric.loader import NeighborLoader as PygLoader
    pyg = inspect.signature(PygLoader).parameters
    positional = [p for p in ours if ours[p].kind is
                  inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == [p for p in pyg if pyg[p].kind is
                          inspect.Parameter.POSITIONAL_OR_KEYWORD]
    for name in positional:
        assert ours[name].default == pyg[name].default or name in (
            'subgraph_type', ), name


def test_no_shuffle_by_default(cora_store):
    loader = NeighborLoader(cora_store, [3], batch_size=500)
    seeds = torch.cat([b.n_id[:b.batch_size] for b in loader])
    assert torch.equal(seeds, torch.arange(cora_store.num_nodes))


def test_num_workers_zero_gives_the_same_batches(cora_store):
    kwargs = dict(num_neighbors=[4, 2], batch_size=300, shuffle=True, seed=3)
    zero = [b.n_id for b in NeighborLoader(cora_store, num_workers=0,
                                           **kwargs)]
    three = [b.n_id for b in NeighborLoader(cora_store, num_workers=3,
                                            **kwargs)]
    assert len(zero) == len(three) == 10
    assert all(torch.equal(a, b) for a, b in zip(zero, three))


def test_iterators_are_independent(cora_store):
    loader = NeighborLoader(cora_store, [2], batch_size=600,
                            input_nodes=torch.arange(2700))
    n = len(loader)
    assert n == 5
    pairs = list(zip(loader, loader))
    assert len(pairs) == n
    for a, b in pairs:  # each stream has its own batches, in order
        assert torch.equal(a.n_id[:a.batch_size], b.n_id[:b.batch_size])
    count = sum(1 for _ in loader for _ in loader)
    assert count == n * n
    first = iter(loader)
    next(first)
    assert len(list(loader)) == n  # a second iterator meanwhile
    assert len(list(first)) == n - 1  # the first goes on where it was


def test_input_id_and_node_attributes(small_data):
    small_data.score = torch.arange(8.0) * 10  # a node-level attribute
    small_data.name = 'hand-drawn'  # a graph-level one
    nodes = torch.tensor([6, 0, 2, 5, 1])
    loader = NeighborLoader(small_data, [2, 2], input_nodes=nodes,
                            batch_size=2, shuffle=True)
    seen = []
    for batch in loader:
        seeds = batch.n_id[:batch.batch_size]
        assert torch.equal(nodes[batch.input_id], seeds)
        seen.append(batch.input_id)
        for key in ('train_mask', 'val_mask', 'test_mask', 'score', 'y', 'x'):
            assert torch.equal(batch[key], small_data[key][batch.n_id]), key
        assert batch.name == 'hand-drawn'
    assert sorted(torch.cat(seen).tolist()) == list(range(5))


def test_store_batches_carry_masks(cora_store):
    data = cora_store.to_pyg()
    batch = next(iter(NeighborLoader(cora_store, [3], batch_size=64)))
    for key in ('train_mask', 'val_mask', 'test_mask'):
        assert batch[key].dtype == torch.bool
        assert torch.equal(batch[key], data[key][batch.n_id])
    assert batch.y.dtype == torch.long
    assert torch.equal(batch.y, data.y[batch.n_id])
    assert torch.equal(batch.input_id, torch.arange(64))


def test_y_of_shape_n_by_1(small_data):
    small_data.y = small_data.y.view(-1, 1)
    store = dgcn.data.from_pyg(small_data)
    assert torch.equal(store.labels.long(), small_data.y.view(-1))
    batch = next(iter(NeighborLoader(small_data, [2], batch_size=3)))
    assert torch.equal(batch.y, small_data.y[batch.n_id])  # PyG's [n, 1]


def test_transform_is_applied(small_data):
    def mark(batch):
        batch.marked = batch.batch_size * 100
        return batch
    batches = list(NeighborLoader(small_data, [2], batch_size=5,
                                  transform=mark))
    assert [b.marked for b in batches] == [500, 300]


@pytest.mark.parametrize('name, value', [
    ('disjoint', True), ('subgraph_type', 'induced'),
    ('subgraph_type', 'bidirectional'), ('input_time', torch.zeros(8)),
    ('time_attr', 'time'), ('weight_attr', 'w'),
    ('temporal_strategy', 'last'), ('directed', False),
    ('transform_sampler_output', print), ('neighbor_sampler', object()),
    ('collate_fn', print), ('sampler', [0]), ('batch_sampler', [[0]]),
    ('generator', torch.Generator()), ('worker_init_fn', print),
    ('multiprocessing_context', 'spawn'), ('timeout', 5),
    ('pin_memory_device', 'cuda'),
])
def test_unsupported_pyg_arguments_are_named(small_data, name, value):
    with pytest.raises(NotImplementedError, match=name):
        NeighborLoader(small_data, [2], **{name: value})


@pytest.mark.parametrize('name, value', [
    ('is_sorted', True), ('filter_per_worker', True),
    ('persistent_workers', True), ('pin_memory', True),
    ('prefetch_factor', 3), ('subgraph_type', 'directional'),
    ('directed', True), ('in_order', True), ('timeout', 0),
])
def test_harmless_pyg_arguments_are_accepted(small_data, name, value):
    batches = list(NeighborLoader(small_data, [2], batch_size=4,
                                  **{name: value}))
    assert len(batches) == 2


def _pyg_full_batch(data, rows, seeds):
    # PyG's NeighborLoader batch for num_neighbors=[-1] (directional): the
    # seeds, then their neighbours in first-seen order, and every edge into
    # a seed. Node order does not change a seed's output.
    n_id = seeds.tolist()
    where = {v: i for i, v in enumerate(n_id)}
    src, dst = [], []
    for i, s in enumerate(seeds.tolist()):
        for u in rows[s]:
            if u not in where:
                where[u] = len(n_id)
                n_id.append(u)
            src.append(where[u])
            dst.append(i)
    return torch.tensor(n_id), torch.tensor([src, dst])


def test_pyg_inference_pattern_on_cora(cora_store):
    # PyG's examples' inference(): layer by layer over a subgraph loader
    # over all nodes, without shuffle=, gathering x_all[batch.n_id] and
    # keeping out[:batch_size] in loader order. A PyG model (PyG's GCNConv)
    # trained on the full graph must score the same on our loader as on
    # PyG's batches (rebuilt here), and as well as full-graph evaluation.
    data = cora_store.to_pyg()
    torch.manual_seed(0)
    convs = torch.nn.ModuleList([pyg_nn.GCNConv(data.num_features, 16),
                                 pyg_nn.GCNConv(16, 7)])
    opt = torch.optim.Adam(convs.parameters(), lr=0.01, weight_decay=5e-4)
    for _ in range(100):
        opt.zero_grad()
        h = F.dropout(convs[0](data.x, data.edge_index).relu(), 0.5)
        out = convs[1](h, data.edge_index)
        mask = data.train_mask
        F.cross_entropy(out[mask], data.y[mask]).backward()
        opt.step()
    convs.eval()

    loader = NeighborLoader(data, [-1], batch_size=700)
    rowptr, col = cora_store.rowptr.tolist(), cora_store.col.tolist()
    rows = [col[rowptr[v]:rowptr[v + 1]] for v in range(data.num_nodes)]

    @torch.no_grad()
    def inference(batches):
        x_all = data.x
        for i, conv in enumerate(convs):
            xs = []
            for n_id, edge_index, batch_size in batches:
                h = conv(x_all[n_id], edge_index)[:batch_size]
                xs.append(h.relu() if i == 0 else h)
            x_all = torch.cat(xs)
        return x_all

    ours = inference([(b.n_id, b.edge_index, b.batch_size) for b in loader])
    seeds = torch.arange(data.num_nodes).split(700)
    theirs = inference([(*_pyg_full_batch(data, rows, s), s.numel())
                        for s in seeds])
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
    mask = data.test_mask
    acc = (ours.argmax(1)[mask] == data.y[mask]).float().mean().item()
    with torch.no_grad():
        full = convs[1](convs[0](data.x, data.edge_index).relu(),
                        data.edge_index)
    full_acc = (full.argmax(1)[mask] == data.y[mask]).float().mean().item()
    assert acc > 0.7 and abs(acc - full_acc) < 0.05, (acc, full_acc)


def test_batches_follow_loader_data_as_pygs_examples_edit_it(cora_store):
    # PyG's examples (reddit.py, ogbn_products_sage.py) build their
    # subgraph loader over copy.copy(data), then `del loader.data.x,
    # loader.data.y` and set `loader.data.n_id`: PyG's batches slice
    # loader.data as it is, so ours follow it from the next iteration.
    import copy
    data = cora_store.to_pyg()
    loader = NeighborLoader(copy.copy(data), input_nodes=None,
                            num_neighbors=[-1], batch_size=700)
    before = list(loader)
    for b in before:
        assert torch.equal(b.x, data.x[b.n_id])
        assert torch.equal(b.y, data.y[b.n_id])
    del loader.data.x, loader.data.y
    loader.data.num_nodes = data.num_nodes
    loader.data.n_id = torch.arange(data.num_nodes) * 10  # sliced, as PyG's
    after = list(loader)
    assert len(after) == len(before)
    assert 'x' in data and 'y' in data, 'the copy was edited, not the data'
    for a, b in zip(after, before):
        assert a.x is None and a.y is None
        assert torch.equal(a.n_id, b.n_id * 10)
        assert torch.equal(a.edge_index, b.edge_index)
        assert torch.equal(a.train_mask, data.train_mask[b.n_id])
    # An x replaced after the loader was built is the one batches carry
    # (not the rows the loader's store was made from).
    loader.data.x = data.x * 2
    for b in loader:
        assert torch.equal(b.x, data.x[b.n_id // 10] * 2)
