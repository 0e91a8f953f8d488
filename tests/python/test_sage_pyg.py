"""dgcn.nn.SAGEConv against torch_geometric.nn.SAGEConv: PyG's signature and
state_dict keys, weights loading both ways, and outputs and gradients (x
and every parameter) equal to PyG's within 1e-5 relative
(||ours - PyG's|| / ||PyG's||), option by option, on the full Cora graph
and on NeighborLoader batches."""
import inspect

import pytest
import torch
import torch_geometric.nn as pyg_nn

import dgcn
from conv_helpers import close, compare, graph, loads_both_ways, pair


@pytest.mark.parametrize('options', [
    {},
    {'normalize': True},
    {'root_weight': False},
    {'bias': False},
    {'normalize': True, 'root_weight': False, 'bias': False},
])
@pytest.mark.parametrize('widths', [(6, 5), (6, 40)])
def test_each_option_equals_pyg(options, widths):
    # Two width ratios: the layer transforms first for a wide output, else
    # aggregates first (models/gcn.h, Note [Aggregation order]).
    x, ei = graph(features=widths[0])
    ours, theirs = pair(dgcn.nn.SAGEConv, pyg_nn.SAGEConv, *widths,
                        **options)
    compare(ours, theirs, x, ei)


def test_bipartite_equals_pyg():
    x, ei = graph(n=40)
    x_dst = torch.randn(25, 3)
    ei = ei[:, ei[1] < 25]
    ours, theirs = pair(dgcn.nn.SAGEConv, pyg_nn.SAGEConv, (6, 3), 5)
    compare(ours, theirs, (x, x_dst), ei)
    compare(ours, theirs, (x, x_dst), ei, (40, 25))
    ours, theirs = pair(dgcn.nn.SAGEConv, pyg_nn.SAGEConv, 6, 5)
    compare(ours, theirs, (x, x[:25]), ei)


def test_full_cora_equals_pyg(cora_data):
    for out in (16, 7):
        ours, theirs = pair(dgcn.nn.SAGEConv, pyg_nn.SAGEConv,
                            cora_data.num_features, out)
        compare(ours, theirs, cora_data.x, cora_data.edge_index)


def test_sampled_batches_equal_pyg(cora_store):
    loader = dgcn.loader.NeighborLoader(cora_store, [10, 5], batch_size=173,
                                        shuffle=True, seed=3)
    ours, theirs = pair(dgcn.nn.SAGEConv, pyg_nn.SAGEConv,
                        cora_store.num_features, 16)
    for i, batch in enumerate(loader):
        # The batch's EdgeIndex (read from its CSC form) and the same
        # edges as a plain tensor.
        compare(ours, theirs, batch.x, batch.edge_index)
        compare(ours, theirs, batch.x, batch.edge_index.as_tensor())
        if i == 2:
            break


def test_trimmed_layers_equal_untrimmed(cora_store):
    # With num_dst (trim_to_layer), the rows computed equal those of the
    # untrimmed batch.
    loader = dgcn.loader.NeighborLoader(cora_store, [10, 5], batch_size=64)
    batch = next(iter(loader))
    convs = [dgcn.nn.SAGEConv(cora_store.num_features, 16),
             dgcn.nn.SAGEConv(16, 7)]
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
    with pytest.raises(IndexError, match='past the rows computed'):
        convs[0](batch.x, batch.edge_index, num_dst=64)


def test_state_dict_loads_both_ways():
    x, ei = graph(seed=4)
    loads_both_ways(dgcn.nn.SAGEConv(6, 5, normalize=True),
                    pyg_nn.SAGEConv(6, 5, normalize=True), x, ei)


def test_lazy_in_channels():
    x, ei = graph()
    ours = dgcn.nn.SAGEConv(-1, 5)
    theirs = pyg_nn.SAGEConv(-1, 5)
    out = ours(x, ei)
    assert ours.lin_l.weight.shape == ours.lin_r.weight.shape == (5, 6)
    assert out.shape == (x.size(0), 5)
    theirs(x, ei)  # materializes PyG's
    theirs.load_state_dict(ours.state_dict())
    close(ours(x, ei), theirs(x, ei))
    # A lazy layer also loads a state_dict before its first call.
    fresh = dgcn.nn.SAGEConv(-1, 5)
    fresh.load_state_dict(theirs.state_dict())
    close(fresh(x, ei), theirs(x, ei))


def test_signature_is_pygs():
    ours = inspect.signature(dgcn.nn.SAGEConv.forward).parameters
    theirs = inspect.signature(pyg_nn.SAGEConv.forward).parameters
    assert list(ours)[:4] == list(theirs) == ['self', 'x', 'edge_index',
                                              'size']
    assert ours['num_dst'].kind is inspect.Parameter.KEYWORD_ONLY
    init_ours = list(inspect.signature(dgcn.nn.SAGEConv).parameters)
    init_theirs = list(inspect.signature(pyg_nn.SAGEConv).parameters)
    assert init_ours == init_theirs


def test_unsupported_options_are_refused():
    with pytest.raises(NotImplementedError, match="aggr='max'"):
        dgcn.nn.SAGEConv(6, 5, aggr='max')
    with pytest.raises(NotImplementedError, match='project'):
        dgcn.nn.SAGEConv(6, 5, project=True)
    with pytest.raises(NotImplementedError, match='flow'):
        dgcn.nn.SAGEConv(6, 5, flow='target_to_source')
    with pytest.raises(ValueError, match='in_channels'):
        dgcn.nn.SAGEConv(0, 5)


def test_bad_inputs_name_the_argument():
    x, ei = graph()
    conv = dgcn.nn.SAGEConv(6, 5)
    with pytest.raises(IndexError, match=r'edge_index\[0\] holds 40'):
        conv(x, torch.cat([ei, torch.tensor([[40], [0]])], 1))
    with pytest.raises(IndexError, match=r'edge_index\[1\] holds -1'):
        conv(x, torch.cat([ei, torch.tensor([[0], [-1]])], 1))
    with pytest.raises(TypeError, match='int64'):
        conv(x, ei.int())
    with pytest.raises(ValueError, match='7 features'):
        conv(torch.randn(40, 7), ei)
    with pytest.raises(NotImplementedError, match='sparse adjacency'):
        conv(x, torch.sparse_coo_tensor(ei, torch.ones(ei.size(1)),
                                        (40, 40)))
    with pytest.raises(IndexError, match=r'target node id in \[0, 3\)'):
        conv(x, ei, num_dst=3)


class _SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = dgcn.nn.SAGEConv(in_channels, hidden)
        self.conv2 = dgcn.nn.SAGEConv(hidden, out_channels)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


def test_compiled_model_trains_like_eager(trains_like_eager):
    x, ei = graph(seed=3, features=8)
    y = torch.randint(0, 3, (x.size(0), ))
    trains_like_eager(lambda: _SAGE(8, 16, 3), x, ei, y)
