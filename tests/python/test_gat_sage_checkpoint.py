"""dgcn-train --model sage|gat checkpoints across the language line:
dgcn.nn.load_checkpoint builds dgcn.nn.GraphSAGE / GAT with the file's
weights, whose predict(store) and full-graph forward give dgcn-predict's
logits, as do PyG's SAGEConv / GATConv layers given the same weights (each
layer's state_dict loads into PyG's as it is); and a model saved from
Python is one dgcn-predict evaluates to the same logits."""
import json
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dgcn
from conftest import _binary


def _run(args):
    proc = subprocess.run([str(a) for a in args], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def _binaries():
    train, predict = _binary('dgcn-train'), _binary('dgcn-predict')
    if train is None or predict is None:
        pytest.skip('no dgcn-train or dgcn-predict binary (build the C++ '
                    'first)')
    if '--heads' not in _run([train, '--help']).stdout:
        pytest.skip('this dgcn-train has no --model sage|gat (built before '
                    'issue 33\'s engine)')
    return train, predict


def _predict(predict, checkpoint, data, out):
    _run([predict, '--checkpoint', checkpoint, '--data', data, '--out', out,
          '--nodes', 'all', '--what', 'logits', '--threads', 2])
    assert torch.equal(torch.from_numpy(np.load(f'{out}.node_ids.npy')),
                       torch.arange(np.load(f'{out}.node_ids.npy').size))
    return torch.from_numpy(np.load(f'{out}.logits.npy'))


def _pyg_logits(model, x, edge_index):
    r"""PyG's layers with the model's weights and activations."""
    import torch_geometric.nn as pyg_nn
    h = x
    for i, ours in enumerate(model.convs):
        if isinstance(ours, dgcn.nn.SAGEConv):
            conv = pyg_nn.SAGEConv(ours.in_channels, ours.out_channels)
        else:
            conv = pyg_nn.GATConv(ours.in_channels, ours.out_channels,
                                  heads=ours.heads, concat=ours.concat)
        conv.load_state_dict(ours.state_dict())
        conv.eval()
        h = conv(h, edge_index)
        if i < len(model.convs) - 1 or model.head is not None:
            h = h.relu() if isinstance(ours, dgcn.nn.SAGEConv) else F.elu(h)
    return h if model.head is None else model.head(h)


@pytest.mark.parametrize('model_args', [
    ('sage', 'none', []),
    ('sage', 'linear', []),
    ('gat', 'none', ['--heads', 3, '--attention-dropout', 0.3]),
])
def test_checkpoint_model_computes_dgcn_predicts_logits(
        cora_path, cora_data, cora_store, tmp_path, model_args):
    kind, head, extra = model_args
    train, predict = _binaries()
    ckpt = tmp_path / 'ckpt'
    _run([train, '--data', cora_path, '--model', kind, '--epochs', 2,
          '--num-neighbors', '10,5', '--hidden', 8, '--head', head,
          '--eval', 'none', '--threads', 2, '--seed', 1, '--checkpoint',
          ckpt] + extra)
    path = ckpt / 'checkpoint-000002.pt'
    logits = _predict(predict, path, cora_path, tmp_path / 'pred')

    model = dgcn.nn.load_checkpoint(path)
    assert type(model) is {'sage': dgcn.nn.GraphSAGE,
                           'gat': dgcn.nn.GAT}[kind]
    assert not model.training and model.config['model']['kind'] == kind
    if kind == 'gat':
        assert model.heads == 3 and model.attention_dropout == 0.3
        assert model.convs[0].heads == 3 and model.convs[0].dropout == 0.3
    # Trained biases, away from GAT's zero start: the comparison sees them.
    conv = model.convs[0]
    bias = conv.lin_l.bias if kind == 'sage' else conv.bias
    assert bias.abs().max() > 1e-3
    torch.testing.assert_close(model.predict(cora_store), logits, rtol=1e-4,
                               atol=1e-5)
    with torch.no_grad():
        full = model(cora_data.x, cora_data.edge_index)
        pyg = _pyg_logits(model, cora_data.x, cora_data.edge_index)
    torch.testing.assert_close(full, logits, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(pyg, logits, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('kind', ['sage', 'gat'])
def test_saved_model_is_one_dgcn_predict_evaluates(cora_path, cora_store,
                                                   tmp_path, kind):
    _, predict = _binaries()
    torch.manual_seed(0)
    if kind == 'sage':
        model = dgcn.nn.GraphSAGE(cora_store.num_features, 16, 7,
                                  num_layers=2, head='linear')
    else:
        model = dgcn.nn.GAT(cora_store.num_features, 4, 7, num_layers=2,
                            heads=2)
    for p in model.parameters():  # no zero bias hiding a forgotten term
        torch.nn.init.uniform_(p, -0.3, 0.3)
    path = tmp_path / 'model.pt'
    dgcn.nn.save_checkpoint(model, path, store=cora_store)
    logits = _predict(predict, path, cora_path, tmp_path / 'pred')
    torch.testing.assert_close(logits, model.predict(cora_store), rtol=1e-4,
                               atol=1e-5)
    again = dgcn.nn.load_checkpoint(path)
    assert type(again) is type(model)
    for (k1, v1), (k2, v2) in zip(model.state_dict().items(),
                                  again.state_dict().items()):
        assert k1 == k2 and torch.equal(v1, v2)
    record = again.config['model']
    assert record['kind'] == kind and record['layers'] == 2


def test_other_kind_is_refused(tmp_path):
    model = dgcn.nn.GraphSAGE(5, 4, 3)
    path = tmp_path / 'sage.pt'
    model.save_checkpoint(path)
    with pytest.raises(ValueError, match="'sage' model, not a 'gat'"):
        dgcn.nn.GAT.from_checkpoint(path)
    with pytest.raises(ValueError, match="'sage' model, not a GCN"):
        dgcn.nn.GCN.from_checkpoint(path)
    d = torch.load(path, weights_only=True)
    d['model.conv3.lin_l.weight'] = torch.zeros(3, 4)
    torch.save(d, path)
    with pytest.raises(ValueError, match='unexpected'):
        dgcn.nn.load_checkpoint(path)
    assert json.loads(d['config'])['writer'] == 'dgcn.nn.GraphSAGE'
