"""dgcn.nn.GCNConv against torch_geometric.nn.GCNConv, and the SpMM op's
autograd against dense algebra."""
import pytest
import torch

import dgcn
from dgcn.loader import NeighborLoader


def _pair(in_channels, out_channels, seed=0):
    # Only the tests with PyG as their oracle need it; the others run without.
    pyg_nn = pytest.importorskip('torch_geometric.nn',
                                 reason='PyG is this test\'s oracle')
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
    ours, theirs = _pair(cora_store.num_features, 32, seed=1)
    loader = NeighborLoader(cora_store, num_neighbors=[10, 5], batch_size=256,
                            seed=1)
    batch = next(iter(loader))
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


@pytest.mark.parametrize('dtype', [torch.long, torch.int])  # int32: in place
def test_unbiased_normalization_rescales_sampled_rows(dtype):
    # Node 0 has 3 neighbours {1, 2, 3}; the batch sampled two of them.
    edge_index = torch.tensor([[1, 2], [0, 0]])
    deg = torch.tensor([3, 1, 3, 1], dtype=dtype)
    rowptr, col, value = dgcn.nn.gcn_norm(edge_index, 4, deg)
    assert rowptr.tolist() == [0, 3, 4, 5, 6]
    assert col.tolist()[:3] == [0, 1, 2]
    want = [1 / 4, 1.5 / (4 * 2) ** 0.5, 1.5 / (4 * 4) ** 0.5]
    assert torch.allclose(value[:3], torch.tensor(want))


@pytest.mark.parametrize('out_channels', [8, 2000])  # both aggregation orders
def test_trimmed_layers_give_the_seeds_the_untrimmed_outputs(cora_store,
                                                             out_channels):
    # A 3-layer GCN computing only what the next layer reads (trim_to_layer,
    # num_dst) gives the seeds the outputs, and the weights the gradients, of
    # the same GCN over the whole batch.
    loader = NeighborLoader(cora_store, num_neighbors=[5, 4, 3],
                            batch_size=64, seed=3)
    batch = next(iter(loader))
    assert len(batch.num_sampled_nodes) == 4
    assert len(batch.num_sampled_edges) == 3
    torch.manual_seed(3)
    sizes = [cora_store.num_features, out_channels, 16, 7]
    convs = [dgcn.nn.GCNConv(i, o) for i, o in zip(sizes, sizes[1:])]
    whole = batch.x
    trimmed = batch.x
    rows = []
    for i, conv in enumerate(convs):
        whole = conv(whole, batch.edge_index, deg=batch.deg)
        ei, deg, num_src, num_dst = dgcn.nn.trim_to_layer(
            i, batch.num_sampled_nodes, batch.num_sampled_edges,
            batch.edge_index, batch.deg)
        assert trimmed.size(0) == num_src
        trimmed = conv(trimmed, ei, deg=deg, num_dst=num_dst)
        rows.append(trimmed.size(0))
        if i < 2:
            whole, trimmed = whole.relu(), trimmed.relu()
    assert rows[-1] == batch.batch_size
    assert rows[0] < batch.num_nodes  # the last hop is read, not computed
    seeds = whole[:batch.batch_size]
    assert _rel_err(trimmed, seeds) <= 1e-5
    seeds.sum().backward()
    grads = [c.lin.weight.grad.clone() for c in convs]
    for c in convs:
        c.lin.weight.grad = None
    trimmed.sum().backward()
    for c, g in zip(convs, grads):
        assert _rel_err(c.lin.weight.grad, g) <= 1e-5


@pytest.mark.parametrize('out_channels', [8, 2000])
def test_a_first_layer_reading_the_store_equals_gathered_rows(cora_store,
                                                              out_channels):
    # x = the store's whole feature matrix with n_id, against the loader's
    # gathered batch.x: the same outputs and weight gradients.
    def first_batch(gather):
        loader = NeighborLoader(cora_store, num_neighbors=[6, 4],
                                batch_size=50, seed=4,
                                gather_features=gather)
        return next(iter(loader))

    gathered, bare = first_batch(True), first_batch(False)
    assert bare.x is None
    assert torch.equal(gathered.n_id, bare.n_id)
    torch.manual_seed(4)
    conv = dgcn.nn.GCNConv(cora_store.num_features, out_channels)
    ei, deg, _, num_dst = dgcn.nn.trim_to_layer(
        0, bare.num_sampled_nodes, bare.num_sampled_edges, bare.edge_index,
        bare.deg)
    want = conv(gathered.x, ei, deg=deg, num_dst=num_dst)
    want.square().sum().backward()
    grad = conv.lin.weight.grad.clone()
    conv.lin.weight.grad = None
    got = conv(cora_store.x, ei, deg=deg, num_dst=num_dst,
               n_id=bare.n_id)
    assert got.shape == (num_dst, out_channels)
    assert _rel_err(got, want) <= 1e-5
    got.square().sum().backward()
    assert _rel_err(conv.lin.weight.grad, grad) <= 1e-5


def test_num_dst_refuses_an_edge_into_a_row_it_leaves_out():
    edge_index = torch.tensor([[0, 1], [1, 2]])
    with pytest.raises(IndexError, match='past the num_dst = 2 rows'):
        dgcn.nn.gcn_norm(edge_index, 3, None, 2)


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


def test_relu_dropout_is_relu_then_dropout_with_a_seeded_mask():
    x = torch.randn(300, 70, requires_grad=True)
    assert torch.equal(dgcn.nn.relu_dropout(x, 0.5, training=False),
                       x.relu())
    torch.manual_seed(5)
    y = dgcn.nn.relu_dropout(x, 0.25)
    torch.manual_seed(5)
    assert torch.equal(dgcn.nn.relu_dropout(x, 0.25), y)  # seeded
    kept = y != 0
    positive = x > 0
    assert not (kept & ~positive).any()  # nothing negative survives
    assert torch.allclose(y[kept], x[kept] / 0.75)
    dropped = 1 - float(kept.sum()) / float(positive.sum())
    assert abs(dropped - 0.25) < 0.03
    y.backward(torch.ones_like(y))  # the same mask in the backward pass
    assert torch.allclose(x.grad, kept.float() / 0.75)
    with pytest.raises(ValueError, match='p = 1'):
        dgcn.nn.relu_dropout(x, 1)


def test_layerwise_inference_is_the_full_graph_gcn(cora_store, cora_data):
    # Chunks of 500 rows, both aggregation orders: every node's output of a
    # 3-layer GCN over the whole graph with full degrees.
    torch.manual_seed(6)
    sizes = [cora_store.num_features, 2000, 16, 7]
    convs = [dgcn.nn.GCNConv(i, o) for i, o in zip(sizes, sizes[1:])]
    for c in convs:
        c.bias.data.uniform_(-1, 1)
    x = cora_data.x
    for i, conv in enumerate(convs):
        x = conv(x, cora_data.edge_index, deg=cora_store.degree)
        if i < 2:
            x = x.relu()
    got = dgcn.nn.layerwise_inference(convs, cora_store.x, cora_store,
                                      chunk_rows=500)
    assert got.shape == (cora_store.num_nodes, 7)
    assert _rel_err(got, x) <= 1e-5
    with pytest.raises(ValueError, match='x has 5 rows'):
        dgcn.nn.layerwise_inference(convs, cora_store.x[:5], cora_store)
    with pytest.raises(ValueError, match='is not a range of rows'):
        cora_store.adjacency_rows(5, cora_store.num_nodes + 1)


def test_a_batch_hands_the_layers_its_block_in_csc(cora_store):
    # The batch's edge_index is PyG's EdgeIndex sorted by target with the
    # sampled block's pointer as its CSC cache (valid: PyG's own checks
    # pass); GCNConv computes from it exactly what it computes from the COO
    # tensor, trimmed or not, with or without deg, gradients included, and
    # normalizes the batch once for all its layers.
    from torch_geometric import EdgeIndex
    loader = NeighborLoader(cora_store, num_neighbors=[5, 4, 3],
                            batch_size=64, seed=5)
    batch = next(iter(loader))
    ei = batch.edge_index
    assert isinstance(ei, EdgeIndex) and ei.is_sorted_by_col
    assert ei._indptr is not None and ei._indptr.numel() == batch.num_nodes + 1
    ei.validate()
    want = torch.zeros(batch.num_nodes + 1, dtype=torch.long)
    want[1:] = torch.bincount(ei.as_tensor()[1],
                              minlength=batch.num_nodes).cumsum(0)
    assert torch.equal(ei._indptr, want)
    plain = ei.as_tensor().clone()
    torch.manual_seed(5)
    convs = [dgcn.nn.GCNConv(cora_store.num_features, 16),
             dgcn.nn.GCNConv(16, 16), dgcn.nn.GCNConv(16, 7)]
    for trim in (False, True):
        for deg in (batch.deg, None):
            xs = [batch.x.clone().requires_grad_(),
                  batch.x.clone().requires_grad_()]
            hs = list(xs)
            for i, conv in enumerate(convs):
                outs = []
                for e, h in zip((ei, plain), hs):
                    if trim:
                        e, d, _, num_dst = dgcn.nn.trim_to_layer(
                            i, batch.num_sampled_nodes,
                            batch.num_sampled_edges, e, deg)
                        outs.append(conv(h, e, deg=d, num_dst=num_dst))
                    else:
                        outs.append(conv(h, e, deg=deg))
                assert torch.equal(outs[0], outs[1]), (i, trim, deg)
                hs = [o.relu() for o in outs]
                if i == 0 and trim and deg is not None:
                    cached = ei._dgcn_norm.adj
            hs[0].sum().backward()
            hs[1].sum().backward()
            assert torch.equal(xs[0].grad, xs[1].grad)
    # The trimmed layers with deg took prefixes of one normalization.
    assert ei._dgcn_norm.adj is cached


def test_gcn_norm_csc_refuses_bad_pointers_and_ids():
    op = torch.ops.dgcn.gcn_norm_csc
    with pytest.raises(ValueError, match='colptr must run from 0'):
        op(torch.tensor([0, 5]), torch.tensor([0, 1]), 3, None, 1)
    with pytest.raises(ValueError, match='colptr must not decrease'):
        op(torch.tensor([0, 2, 1]), torch.tensor([0, 1]), 3, None, 2)
    with pytest.raises(IndexError, match=r'row\[1\] = 9'):
        op(torch.tensor([0, 2]), torch.tensor([0, 9]), 3, None, 1)
    with pytest.raises(ValueError, match='at least num_dst'):
        op(torch.tensor([0, 2]), torch.tensor([0, 1]), 3, None, 2)
    with pytest.raises(TypeError, match='row must be int64'):
        op(torch.tensor([0, 2]), torch.tensor([0, 1]).int(), 3, None, 1)
