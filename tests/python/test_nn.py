"""dgcn.nn.GCNConv against torch_geometric.nn.GCNConv, and the SpMM op's
autograd against dense algebra."""
import pytest
import torch

import dgcn
from dgcn.loader import NeighborLoader

pyg_nn = pytest.importorskip('torch_geometric.nn')


def _pair(in_channels, out_channels, seed=0):
    torch.manual_seed(seed)
    ours = dgcn.nn.GCNConv(in_channels, out_channels)
    theirs = pyg_nn.GCNConv(in_channels, out_channels)
    theirs.bias.data.uniform_(-1, 1)
    ours.load_state_dict(theirs.state_dict())  # the same parameter names
    return ours, theirs


def _rel_err(a, b):
    a, b = a.detach(), b.detach()
    return float((a - b).norm() / b.norm())


@pytest.mark.parametrize('out_channels', [7, 2000])  # both aggregation orders
def test_gcnconv_equals_pyg_on_cora(cora_data, out_channels):
    data = cora_data
    ours, theirs = _pair(data.num_features, out_channels)
    x1 = data.x.clone().requires_grad_()
    x2 = data.x.clone().requires_grad_()
    out1 = ours(x1, data.edge_index)
    out2 = theirs(x2, data.edge_index)
    assert out1.shape == out2.shape
    assert _rel_err(out1, out2) <= 1e-5
    grad = torch.randn_like(out2)
    out1.backward(grad)
    out2.backward(grad)
    assert _rel_err(x1.grad, x2.grad) <= 1e-5
    assert _rel_err(ours.lin.weight.grad, theirs.lin.weight.grad) <= 1e-5
    assert _rel_err(ours.bias.grad, theirs.bias.grad) <= 1e-5


def test_gcnconv_full_degree_on_full_graph_is_pyg(cora_data, cora_store):
    # With every neighbour present, full-graph degrees change nothing.
    ours, theirs = _pair(cora_data.num_features, 16)
    out1 = ours(cora_data.x, cora_data.edge_index, deg=cora_store.degree)
    out2 = theirs(cora_data.x, cora_data.edge_index)
    assert _rel_err(out1, out2) <= 1e-5


def test_gcnconv_equals_pyg_on_a_sampled_batch(cora_store):
    loader = NeighborLoader(cora_store, num_neighbors=[10, 5], batch_size=256,
                            seed=1)
    batch = next(iter(loader))
    ours, theirs = _pair(cora_store.num_features, 32, seed=1)
    out1 = ours(batch.x, batch.edge_index)
    out2 = theirs(batch.x, batch.edge_index)
    assert _rel_err(out1, out2) <= 1e-5


def test_unbiased_normalization_is_exact_with_all_neighbours(cora_store,
                                                             cora_data):
    # One layer, every neighbour sampled: the seeds' outputs with the full
    # degrees are the full-graph layer's.
    loader = NeighborLoader(cora_store, num_neighbors=[-1], batch_size=300,
                            seed=2)
    batch = next(iter(loader))
    ours, theirs = _pair(cora_store.num_features, 8, seed=2)
    out = ours(batch.x, batch.edge_index, deg=batch.deg)[:batch.batch_size]
    full = theirs(cora_data.x, cora_data.edge_index)[batch.n_id[:300]]
    assert _rel_err(out, full) <= 1e-5
    # Without the degrees the batch's last hop looks like leaves: different.
    blocky = ours(batch.x, batch.edge_index)[:batch.batch_size]
    assert _rel_err(blocky, full) > 1e-3


def test_unbiased_normalization_rescales_sampled_rows():
    # Node 0 has 3 neighbours {1, 2, 3}; the batch sampled two of them.
    edge_index = torch.tensor([[1, 2], [0, 0]])
    deg = torch.tensor([3, 1, 3, 1])
    rowptr, col, value = dgcn.nn.gcn_norm(edge_index, 4, deg)
    assert rowptr.tolist() == [0, 3, 4, 5, 6]
    assert col.tolist()[:3] == [0, 1, 2]
    want = [1 / 4, 1.5 / (4 * 2) ** 0.5, 1.5 / (4 * 4) ** 0.5]
    assert torch.allclose(value[:3], torch.tensor(want))


def test_spmm_autograd_matches_dense():
    torch.manual_seed(0)
    dense = (torch.rand(50, 40) < 0.1).float() * torch.rand(50, 40)
    csr = dense.to_sparse_csr()
    rowptr, col, value = (csr.crow_indices(), csr.col_indices(),
                          csr.values())
    x1 = torch.randn(40, 6, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_()
    y1 = torch.ops.dgcn.spmm(rowptr, col, value, x1)
    y2 = dense @ x2
    assert torch.allclose(y1, y2, atol=1e-5)
    g = torch.randn(50, 6)
    y1.backward(g)
    y2.backward(g)
    assert torch.allclose(x1.grad, x2.grad, atol=1e-5)


def test_gcnconv_trains(cora_data):
    torch.manual_seed(0)
    conv1 = dgcn.nn.GCNConv(cora_data.num_features, 16, cached=True)
    conv2 = dgcn.nn.GCNConv(16, 7, cached=True)
    params = list(conv1.parameters()) + list(conv2.parameters())
    opt = torch.optim.Adam(params, lr=0.01, weight_decay=5e-4)
    data = cora_data
    for _ in range(100):
        opt.zero_grad()
        h = conv1(data.x, data.edge_index).relu()
        h = torch.nn.functional.dropout(h, 0.5, training=True)
        out = conv2(h, data.edge_index)
        loss = torch.nn.functional.cross_entropy(out[data.train_mask],
                                                 data.y[data.train_mask])
        loss.backward()
        opt.step()
    conv1.eval()
    conv2.eval()
    with torch.no_grad():
        out = conv2(conv1(data.x, data.edge_index).relu(), data.edge_index)
    acc = (out.argmax(1) == data.y)[data.test_mask].float().mean()
    assert acc > 0.7  # Kipf & Welling report 81.5% on the Planetoid split
