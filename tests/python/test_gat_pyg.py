"""dgcn.nn.GATConv against torch_geometric.nn.GATConv: PyG's signature and
state_dict keys, weights loading both ways, and outputs and gradients (x
and every parameter: weights, attention vectors, bias) equal to PyG's
within 1e-5 relative, option by option, on the full Cora graph and on
NeighborLoader batches."""
import inspect

import pytest
import torch
import torch_geometric.nn as pyg_nn

import dgcn
from dgcn._csr import target_of_entries
from conv_helpers import close, compare, graph, loads_both_ways, pair


@pytest.mark.parametrize('options', [
    {},
    {'heads': 3},
    {'heads': 3, 'concat': False},
    {'heads': 2, 'negative_slope': 0.5},
    {'add_self_loops': False},
    {'heads': 2, 'bias': False},
])
def test_each_option_equals_pyg(options):
    x, ei = graph()
    ours, theirs = pair(dgcn.nn.GATConv, pyg_nn.GATConv, 6, 5, **options)
    compare(ours, theirs, x, ei)


def test_bipartite_equals_pyg():
    x, ei = graph(n=40)
    x_dst = torch.randn(25, 3)
    ei = ei[:, ei[1] < 25]
    ours, theirs = pair(dgcn.nn.GATConv, pyg_nn.GATConv, (6, 3), 5, heads=2)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    compare(ours, theirs, (x, x_dst), ei)
    ours, theirs = pair(dgcn.nn.GATConv, pyg_nn.GATConv, 6, 5, heads=2)
    compare(ours, theirs, (x, x[:25]), ei)


def test_full_cora_equals_pyg(cora_data):
    # The paper's first layer (8 heads of 8) and its output layer.
    for args, options in (((8, ), {'heads': 8}),
                          ((7, ), {'heads': 1, 'concat': False})):
        ours, theirs = pair(dgcn.nn.GATConv, pyg_nn.GATConv,
                            cora_data.num_features, *args, **options)
        compare(ours, theirs, cora_data.x, cora_data.edge_index)


def test_sampled_batches_equal_pyg(cora_store):
    loader = dgcn.loader.NeighborLoader(cora_store, [10, 5], batch_size=173,
                                        shuffle=True, seed=3)
    ours, theirs = pair(dgcn.nn.GATConv, pyg_nn.GATConv,
                        cora_store.num_features, 8, heads=4)
    for i, batch in enumerate(loader):
        compare(ours, theirs, batch.x, batch.edge_index)
        compare(ours, theirs, batch.x, batch.edge_index.as_tensor())
        if i == 2:
            break


def test_trimmed_layers_equal_untrimmed(cora_store):
    loader = dgcn.loader.NeighborLoader(cora_store, [10, 5], batch_size=64)
    batch = next(iter(loader))
    convs = [dgcn.nn.GATConv(cora_store.num_features, 4, heads=2),
             dgcn.nn.GATConv(8, 7)]
    full = convs[1](convs[0](batch.x, batch.edge_index).relu(),
                    batch.edge_index)[:64]
    h = batch.x
    for i, conv in enumerate(convs):
        ei, _, num_src, num_dst = dgcn.nn.trim_to_layer(
            i, batch.num_sampled_nodes, batch.num_sampled_edges,
            batch.edge_index)
        h = conv(h[:num_src], ei, num_dst=num_dst)
        h = h.relu() if i == 0 else h
    close(h, full)


def test_attention_weights_equal_pygs():
    # A graph without repeated edges: each (source, target) names one
    # coefficient, whatever order the two layers list the edges in.
    x, ei = graph(seed=5)
    key = torch.unique(ei[1] * 100 + ei[0])
    ei = torch.stack([key % 100, key // 100])
    ours, theirs = pair(dgcn.nn.GATConv, pyg_nn.GATConv, 6, 5, heads=3)
    out_a, (ei_a, alpha_a) = ours(x, ei, return_attention_weights=True)
    out_b, (ei_b, alpha_b) = theirs(x, ei, return_attention_weights=True)
    close(out_a, out_b)
    order_a = torch.argsort(ei_a[1] * 100 + ei_a[0])
    order_b = torch.argsort(ei_b[1] * 100 + ei_b[0])
    assert torch.equal(ei_a[:, order_a], ei_b[:, order_b])
    close(alpha_a[order_a], alpha_b[order_b])
    sums = torch.zeros(x.size(0), 3).index_add_(0, ei_a[1], alpha_a)
    close(sums, torch.ones_like(sums))


def test_attention_dropout_acts_in_training_only():
    x, ei = graph()
    ours, theirs = pair(dgcn.nn.GATConv, pyg_nn.GATConv, 6, 5, heads=2,
                        dropout=0.6)
    ours.eval(), theirs.eval()
    close(ours(x, ei), theirs(x, ei))
    _, (_, want) = ours(x, ei, return_attention_weights=True)
    ours.train()
    torch.manual_seed(0)
    _, (_, alpha) = ours(x, ei, return_attention_weights=True)
    dropped = alpha == 0
    assert 0.4 < dropped.float().mean().item() < 0.8  # about 60% of them
    close(alpha[~dropped], want[~dropped] / 0.4)  # the rest scaled up


def test_state_dict_loads_both_ways():
    x, ei = graph(seed=4)
    loads_both_ways(dgcn.nn.GATConv(6, 5, heads=4),
                    pyg_nn.GATConv(6, 5, heads=4), x, ei)


def test_lazy_in_channels():
    x, ei = graph()
    ours = dgcn.nn.GATConv(-1, 5, heads=2)
    theirs = pyg_nn.GATConv(-1, 5, heads=2)
    out = ours(x, ei)
    assert ours.lin.weight.shape == (10, 6) and out.shape == (40, 10)
    theirs(x, ei)
    theirs.load_state_dict(ours.state_dict())
    close(ours(x, ei), theirs(x, ei))


def test_signature_is_pygs():
    ours = inspect.signature(dgcn.nn.GATConv.forward).parameters
    theirs = inspect.signature(pyg_nn.GATConv.forward).parameters
    assert list(ours)[:6] == list(theirs) == [
        'self', 'x', 'edge_index', 'edge_attr', 'size',
        'return_attention_weights']
    assert ours['num_dst'].kind is inspect.Parameter.KEYWORD_ONLY
    init_ours = list(inspect.signature(dgcn.nn.GATConv).parameters)
    init_theirs = list(inspect.signature(pyg_nn.GATConv).parameters)
    assert init_ours == init_theirs


def test_unsupported_options_are_refused():
    with pytest.raises(NotImplementedError, match='edge_dim=4'):
        dgcn.nn.GATConv(6, 5, edge_dim=4)
    with pytest.raises(NotImplementedError, match='residual'):
        dgcn.nn.GATConv(6, 5, residual=True)
    with pytest.raises(NotImplementedError, match="aggr='mean'"):
        dgcn.nn.GATConv(6, 5, aggr='mean')
    with pytest.raises(ValueError, match='heads'):
        dgcn.nn.GATConv(6, 5, heads=0)
    x, ei = graph()
    conv = dgcn.nn.GATConv(6, 5)
    with pytest.raises(NotImplementedError, match='edge_attr'):
        conv(x, ei, torch.ones(ei.size(1), 3))
    with pytest.raises(IndexError, match=r'edge_index\[0\] holds 40'):
        conv(x, torch.cat([ei, torch.tensor([[40], [0]])], 1))
    with pytest.raises(TypeError, match='float32'):
        conv(x.double(), ei)


class _GAT(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels, heads):
        super().__init__()
        self.conv1 = dgcn.nn.GATConv(in_channels, hidden, heads)
        self.conv2 = dgcn.nn.GATConv(hidden * heads, out_channels)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


def test_compiled_model_trains_like_eager(trains_like_eager):
    x, ei = graph(seed=3, features=8)
    y = torch.randint(0, 3, (x.size(0), ))
    trains_like_eager(lambda: _GAT(8, 4, 3, heads=2), x, ei, y)


def _pattern(seed=0, rows=12, cols=15, heads=3, width=4):
    g = torch.Generator().manual_seed(seed)
    counts = torch.randint(0, 5, (rows, ), generator=g)  # some rows empty
    rowptr = torch.zeros(rows + 1, dtype=torch.long)
    rowptr[1:] = counts.cumsum(0)
    col = torch.randint(0, cols, (int(rowptr[-1]), ), generator=g)
    alpha = torch.rand(col.numel(), heads, generator=g)
    x = torch.randn(cols, heads * width, generator=g)
    return rowptr, col, alpha, x


def test_gat_spmm_op_equals_dense_and_passes_opcheck():
    rowptr, col, alpha, x = _pattern()
    heads, width = alpha.size(1), x.size(1) // alpha.size(1)
    rows = target_of_entries(rowptr)
    a1, x1 = alpha.clone().requires_grad_(), x.clone().requires_grad_()
    out = torch.ops.dgcn.gat_spmm(rowptr, col.int(), a1, x1)
    w = torch.randn_like(out)
    (out * w).sum().backward()
    a2, x2 = alpha.clone().requires_grad_(), x.clone().requires_grad_()
    dense = [torch.zeros(rowptr.numel() - 1, x.size(0)).index_put(
        (rows, col), a2[:, k], accumulate=True) for k in range(heads)]
    want = torch.cat([dense[k] @ x2[:, k * width:(k + 1) * width]
                      for k in range(heads)], 1)
    (want * w).sum().backward()
    close(out, want)
    close(a1.grad, a2.grad)
    close(x1.grad, x2.grad)
    for c in (col, col.int()):
        torch.library.opcheck(
            torch.ops.dgcn.gat_spmm.default,
            (rowptr, c, alpha.clone().requires_grad_(),
             x.clone().requires_grad_()))
    torch.library.opcheck(torch.ops.dgcn.gat_spmm_backward.default,
                          (rowptr, col, alpha, x, torch.randn_like(want)))


def test_gat_spmm_op_names_bad_arguments():
    rowptr, col, alpha, x = _pattern()
    with pytest.raises(IndexError, match='col holds 15'):
        bad = col.clone()
        bad[0] = 15
        torch.ops.dgcn.gat_spmm(rowptr, bad, alpha, x)
    with pytest.raises(ValueError, match='alpha must be'):
        torch.ops.dgcn.gat_spmm(rowptr, col, alpha[1:], x)
    with pytest.raises(ValueError, match='x must be'):
        torch.ops.dgcn.gat_spmm(rowptr, col, alpha, x[:, 1:])
    with pytest.raises(TypeError, match='float32'):
        torch.ops.dgcn.gat_spmm(rowptr, col, alpha, x.double())


def test_gat_spmm_under_autocast_runs_in_float32():
    # No bf16 kernel: autocast casts bf16 alpha and x up (autocast's fp32
    # policy), the result equals the op on the cast inputs, and the
    # gradients return through the casts in the inputs' dtypes.
    rowptr, col, alpha, x = _pattern()
    ab = alpha.bfloat16().requires_grad_()
    xb = x.bfloat16().requires_grad_()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = torch.ops.dgcn.gat_spmm(rowptr, col, ab, xb)
    assert out.dtype == torch.float32
    assert torch.equal(out, torch.ops.dgcn.gat_spmm(
        rowptr, col, ab.detach().float(), xb.detach().float()))
    out.sum().backward()
    assert ab.grad.dtype == xb.grad.dtype == torch.bfloat16


def test_gatconv_under_autocast_trains_like_float32():
    x, ei = graph()
    torch.manual_seed(0)
    conv = dgcn.nn.GATConv(6, 5, heads=2)
    want = conv(x, ei)
    want.sum().backward()
    want_grads = [p.grad.clone() for p in conv.parameters()]
    conv.zero_grad()
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = conv(x, ei)
    assert out.dtype == torch.float32  # the float32 SpMM, then the bias
    torch.testing.assert_close(out, want.detach(), rtol=3e-2, atol=3e-2)
    out.sum().backward()
    # bf16 scores round before the softmax, whose gradient sums them over
    # every edge: compared as whole tensors, within 5% of their norm.
    for name, p, g in zip(dict(conv.named_parameters()), conv.parameters(),
                          want_grads):
        assert p.dtype == p.grad.dtype == torch.float32
        assert (p.grad - g).norm() <= 0.05 * g.norm(), name
