"""The C++ model that dgcn-train trains and dgcn-predict runs, against PyG's
GCNConv stack given the same weights (read from the checkpoint with
torch.load). PyG computes the reference here, in the test run: every
node's logits, which dgcn-train's reported test accuracy must score."""
import json
import subprocess

import numpy as np
import pytest
import torch

from conftest import _binary


def _run(args):
    proc = subprocess.run([str(a) for a in args], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def _model_state(checkpoint):
    d = torch.load(checkpoint)
    state = {k[len('model.'):]: v for k, v in d.items()
             if k.startswith('model.')}
    return state, json.loads(d['config'])


def _pyg_logits(state, num_layers, head, x, edge_index):
    """PyG's GCNConv layers (relu between them) and, with head 'linear', a
    Linear after a last relu, carrying the C++ model's parameters."""
    pyg_nn = pytest.importorskip('torch_geometric.nn',
                                 reason='PyG is this test\'s oracle')
    h = x
    for layer in range(1, num_layers + 1):
        weight = state[f'conv{layer}.weight']  # [in x out]: PyG's lin is [out x in]
        conv = pyg_nn.GCNConv(weight.size(0), weight.size(1))
        with torch.no_grad():
            conv.lin.weight.copy_(weight.t())
            conv.bias.copy_(state[f'conv{layer}.bias'])
        h = conv(h, edge_index)
        if layer < num_layers or head == 'linear':
            h = h.relu()
    if head == 'linear':
        h = torch.nn.functional.linear(h, state['head.weight'],
                                       state['head.bias'])
    return h


@pytest.mark.parametrize('head', ['none', 'linear'])
def test_dgcn_train_and_predict_compute_pygs_gcn(cora_path, cora_data,
                                                 tmp_path, head):
    from torch_geometric.transforms import NormalizeFeatures
    train, predict = _binary('dgcn-train'), _binary('dgcn-predict')
    if train is None or predict is None:
        pytest.skip('no dgcn-train or dgcn-predict binary (build the C++ '
                    'first)')
    ckpt = tmp_path / 'ckpt'
    run = _run([train, '--data', cora_path, '--epochs', 3,
                '--num-neighbors', '10,5,5', '--hidden', 16, '--head', head,
                '--normalize-features', '--eval', 'full', '--threads', 2,
                '--seed', 1, '--checkpoint', ckpt])
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    out = tmp_path / 'pred'
    _run([predict, '--checkpoint', ckpt / 'checkpoint-000003.pt', '--data',
          cora_path, '--out', out, '--nodes', 'all', '--what', 'logits',
          '--threads', 2])
    node_ids = torch.from_numpy(np.load(f'{out}.node_ids.npy'))
    logits = torch.from_numpy(np.load(f'{out}.logits.npy'))
    # The fixture's store is not reordered: source ids are its rows.
    assert torch.equal(node_ids, torch.arange(cora_data.num_nodes))

    state, config = _model_state(ckpt / 'checkpoint-000003.pt')
    assert config['model']['normalize_features'] is True
    for layer in (1, 2, 3):
        # Trained biases, far from their zero start: the comparison sees them.
        assert state[f'conv{layer}.bias'].abs().max() > 1e-3, layer
    x = NormalizeFeatures()(cora_data.clone()).x
    with torch.no_grad():
        want = _pyg_logits(state, 3, head, x, cora_data.edge_index)
    torch.testing.assert_close(logits, want, rtol=1e-4, atol=1e-5)

    # dgcn-train's own evaluation of these (the final) weights scores these
    # logits (argmax of the C++ ones: PyG's equal them up to rounding, which
    # may flip a near-tie).
    test = cora_data.test_mask
    acc = float((logits.argmax(1)[test] == cora_data.y[test]).double().mean())
    assert summary['test_acc'] == pytest.approx(acc, abs=1e-9)
