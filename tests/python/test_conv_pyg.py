"""dgcn.nn.GCNConv against torch_geometric.nn.GCNConv option by option:
PyG's signature, and outputs and gradients (x, weights, bias, edge weights)
equal to PyG's within 1e-5 relative (||ours - PyG's|| / ||PyG's||: the
sums run in another order)."""
import inspect

import pytest
import torch
import torch_geometric.nn as pyg_nn

import dgcn
from conv_helpers import close, pair


def _graph(seed=0, n=40, m=150):
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, n, (2, m), generator=g)
    ei[:, :5] = torch.arange(5).repeat(2, 1)  # a few self-loops
    ei = torch.cat([ei, ei[:, :7]], 1)  # and repeated edges
    x = torch.randn(n, 6, generator=g)
    w = torch.rand(ei.size(1), generator=g) + 0.1
    return x, ei, w


def _pair(in_channels=6, out_channels=5, **options):
    return pair(dgcn.nn.GCNConv, pyg_nn.GCNConv, in_channels, out_channels,
                **options)


def _compare(ours, theirs, x, ei, w=None, weight_grad=False):
    results = []
    for conv in (ours, theirs):
        xi = x.clone().requires_grad_()
        wi = None if w is None else w.clone().requires_grad_(weight_grad)
        out = conv(xi, ei, wi)
        weights = torch.linspace(-1, 1, out.numel()).view_as(out)
        (out * weights).sum().backward()
        grads = [xi.grad, conv.lin.weight.grad]
        if conv.bias is not None:
            grads.append(conv.bias.grad)
        if weight_grad:
            grads.append(wi.grad)
        results.append((out.detach(), grads))
    (a, ga), (b, gb) = results
    close(a, b)
    assert len(ga) == len(gb)
    for g1, g2 in zip(ga, gb):
        close(g1, g2)


@pytest.mark.parametrize('options', [
    {},
    {'improved': True},
    {'add_self_loops': False},
    {'normalize': False},
    {'bias': False},
    {'improved': True, 'bias': False},
])
@pytest.mark.parametrize('weighted', [False, True])
def test_each_option_equals_pyg(options, weighted):
    x, ei, w = _graph()
    ours, theirs = _pair(**options)
    _compare(ours, theirs, x, ei, w if weighted else None)


@pytest.mark.parametrize('bias', [True, False])
@pytest.mark.parametrize('hook', [False, True])
def test_both_orders_equal_pyg(bias, hook):
    # GCNConv multiplies by lin.weight itself (x @ W, the bias inside an
    # addmm) in either order: aggregating first (wide in, narrow out) or
    # transforming first; a hook on lin makes it call lin(x), as PyG does.
    orders = set()
    for channels in ((40, 3), (3, 40)):
        g = torch.Generator().manual_seed(channels[0])
        n = 60
        ei = torch.randint(0, n, (2, 400), generator=g)
        x = torch.randn(n, channels[0], generator=g)
        ours, theirs = _pair(*channels, bias=bias)
        orders.add(dgcn._C.aggregate_first(n, n, ei.size(1) + n, *channels,
                                           True, True))
        calls = []
        if hook:
            ours.lin.register_forward_hook(lambda *_: calls.append(1))
        _compare(ours, theirs, x, ei)
        assert len(calls) == (1 if hook else 0)
    assert orders == {True, False}


def test_edge_weight_gradient_equals_pyg():
    x, ei, w = _graph(seed=2)
    for options in ({}, {'improved': True}, {'normalize': False}):
        ours, theirs = _pair(**options)
        _compare(ours, theirs, x, ei, w, weight_grad=True)


def test_full_cora_equals_pyg(cora_data):
    ours, theirs = _pair(cora_data.num_features, 16)
    _compare(ours, theirs, cora_data.x, cora_data.edge_index)


def test_lazy_in_channels():
    x, ei, _ = _graph()
    ours = dgcn.nn.GCNConv(-1, 5)
    theirs = pyg_nn.GCNConv(-1, 5)
    out = ours(x, ei)
    assert ours.in_channels == 6 and ours.lin.weight.shape == (5, 6)
    assert out.shape == (x.size(0), 5)
    theirs(x, ei)  # materializes PyG's
    theirs.load_state_dict(ours.state_dict())
    close(ours(x, ei), theirs(x, ei))


def test_signature_is_pygs():
    ours = inspect.signature(dgcn.nn.GCNConv.forward).parameters
    theirs = inspect.signature(pyg_nn.GCNConv.forward).parameters
    assert list(ours)[:4] == list(theirs)[:4] == [
        'self', 'x', 'edge_index', 'edge_weight']
    for name in ('deg', 'num_dst', 'n_id'):
        assert ours[name].kind is inspect.Parameter.KEYWORD_ONLY
    init_ours = list(inspect.signature(dgcn.nn.GCNConv).parameters)
    init_theirs = list(inspect.signature(pyg_nn.GCNConv).parameters)
    assert init_ours == init_theirs
    a, b = _pair()
    assert list(a.state_dict()) == list(b.state_dict())


def test_integer_edge_weight_points_at_deg():
    x, ei, _ = _graph()
    conv = dgcn.nn.GCNConv(6, 5)
    with pytest.raises(TypeError, match='deg='):
        conv(x, ei, torch.ones(ei.size(1), dtype=torch.long))


def test_unsupported_options_are_refused():
    with pytest.raises(NotImplementedError, match="aggr='mean'"):
        dgcn.nn.GCNConv(6, 5, aggr='mean')
    with pytest.raises(NotImplementedError, match='flow'):
        dgcn.nn.GCNConv(6, 5, flow='target_to_source')
    with pytest.raises(ValueError, match='add_self_loops'):
        dgcn.nn.GCNConv(6, 5, add_self_loops=True, normalize=False)
    x, ei, w = _graph()
    conv = dgcn.nn.GCNConv(6, 5)
    with pytest.raises(NotImplementedError, match='deg='):
        conv(x, ei, w, deg=torch.ones(x.size(0), dtype=torch.long))


def test_cached_is_for_one_graph():
    x, ei, w = _graph()
    ours, theirs = _pair(cached=True)
    first = ours(x, ei)
    close(first, theirs(x, ei))
    # The same graph (the same tensor, or an equal one) reuses the cache.
    close(ours(x * 2, ei.clone()), theirs(x * 2, ei))
    x2, ei2, _ = _graph(seed=5, n=30)
    with pytest.raises(ValueError, match='another graph'):
        ours(x2, ei2)
    with pytest.raises(ValueError, match='another graph'):
        ours(x, ei, w)
    ours.reset_parameters()  # forgets the cache
    assert ours(x2, ei2).shape == (30, 5)


def test_cached_on_sampled_batches_raises(cora_store):
    loader = dgcn.loader.NeighborLoader(cora_store, [10, 5], batch_size=173)
    conv = dgcn.nn.GCNConv(cora_store.num_features, 7, cached=True)
    batches = iter(loader)
    first = next(batches)
    assert conv(first.x, first.edge_index).size(0) == first.num_nodes
    second = next(batches)
    with pytest.raises(ValueError, match='another graph'):
        conv(second.x, second.edge_index)


def test_edge_index_forms():
    from torch_geometric import EdgeIndex
    x, ei, w = _graph(seed=4)
    ours, theirs = _pair()
    wrapped = EdgeIndex(ei, sparse_size=(x.size(0), x.size(0)))
    close(ours(x, wrapped), theirs(x, ei))
    close(ours(x, wrapped, w), theirs(x, ei, w))
    adj = torch.sparse_coo_tensor(ei, torch.ones(ei.size(1)),
                                  (x.size(0), x.size(0)))
    with pytest.raises(NotImplementedError, match='sparse adjacency'):
        ours(x, adj)
    with pytest.raises(NotImplementedError, match='list'):
        ours(x, ei.tolist())
