"""The C++ model that dgcn-train trains and dgcn-predict runs, against PyG's
GCNConv stack given the same weights (read from the checkpoint by
dgcn.nn.load_checkpoint), and checkpoints across the language line. PyG computes the reference here, in the test run: every
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


def _pyg_logits(model, x, edge_index):
    """PyG's GCNConv layers (relu between them) and, with a linear head, a
    Linear after a last relu, carrying the parameters of the checkpoint's
    model as dgcn.nn.load_checkpoint builds it (PyG's names and layouts:
    each conv's state_dict loads into PyG's GCNConv as it is)."""
    pyg_nn = pytest.importorskip('torch_geometric.nn',
                                 reason='PyG is this test\'s oracle')
    h = x
    for i, ours in enumerate(model.convs):
        conv = pyg_nn.GCNConv(ours.in_channels, ours.out_channels)
        conv.load_state_dict(ours.state_dict())
        h = conv(h, edge_index)
        if i < len(model.convs) - 1 or model.head is not None:
            h = h.relu()
    return h if model.head is None else model.head(h)


@pytest.mark.parametrize('head', ['none', 'linear'])
def test_dgcn_train_and_predict_compute_pygs_gcn(cora_path, cora_data,
                                                 cora_store, tmp_path, head):
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

    import dgcn
    model = dgcn.nn.load_checkpoint(ckpt / 'checkpoint-000003.pt')
    assert model.config['model']['normalize_features'] is True
    for conv in model.convs:
        # Trained biases, far from their zero start: the comparison sees them.
        assert conv.bias.abs().max() > 1e-3
    x = NormalizeFeatures()(cora_data.clone()).x
    with torch.no_grad():
        want = _pyg_logits(model, x, cora_data.edge_index)
    torch.testing.assert_close(logits, want, rtol=1e-4, atol=1e-5)
    # The package's own model: its full-graph forward and predict(store)
    # give dgcn-predict's logits.
    torch.testing.assert_close(model.predict(cora_store), logits, rtol=1e-4,
                               atol=1e-5)
    with torch.no_grad():
        full = model(model.input_features(cora_data.x),
                     cora_data.edge_index)
    torch.testing.assert_close(full, logits, rtol=1e-4, atol=1e-5)

    # dgcn-train's own evaluation of these (the final) weights scores these
    # logits (argmax of the C++ ones: PyG's equal them up to rounding, which
    # may flip a near-tie).
    test = cora_data.test_mask
    acc = float((logits.argmax(1)[test] == cora_data.y[test]).double().mean())
    assert summary['test_acc'] == pytest.approx(acc, abs=1e-9)


def test_python_model_round_trips_through_dgcn_predict(cora_path, cora_store,
                                                       tmp_path):
    """A model trained in Python, saved with save_checkpoint: dgcn-predict
    evaluates it to the Python model's logits, with no warning that the
    store differs; and load_checkpoint gives the same parameters back."""
    import dgcn
    predict = _binary('dgcn-predict')
    if predict is None:
        pytest.skip('no dgcn-predict binary (build the C++ first)')
    torch.manual_seed(0)
    model = dgcn.nn.GCN(cora_store.num_features, 16, cora_store.num_classes,
                        num_layers=2, head='linear', normalize_features=True)
    data = dgcn.data.to_pyg(cora_store)
    x = model.input_features(data.x)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(5):  # full-graph training steps, as a PyG user writes
        optimizer.zero_grad()
        out = model(x, data.edge_index)
        loss = torch.nn.functional.cross_entropy(out[data.train_mask],
                                                 data.y[data.train_mask])
        loss.backward()
        optimizer.step()
    path = tmp_path / 'python.pt'
    model.save_checkpoint(path, store=cora_store, epoch=5)
    out = tmp_path / 'pred'
    run = _run([predict, '--checkpoint', path, '--data', cora_path, '--out',
                out, '--nodes', 'all', '--what', 'logits', '--threads', 2])
    assert 'not the one the model was trained on' not in run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1])['epoch'] == 5
    logits = torch.from_numpy(np.load(f'{out}.logits.npy'))
    model.eval()
    with torch.no_grad():
        want = model(x, data.edge_index)
    assert want.std() > 1e-2  # trained, not all-equal rows
    torch.testing.assert_close(logits, want, rtol=1e-4, atol=1e-5)
    back = dgcn.nn.load_checkpoint(path)
    for (k, a), (k2, b) in zip(model.state_dict().items(),
                               back.state_dict().items()):
        assert k == k2 and torch.equal(a, b), k


def test_load_checkpoint_refuses_what_is_not_a_dgcn_gcn(tmp_path):
    import dgcn
    path = tmp_path / 'other.pt'
    torch.save({'weights': torch.zeros(3)}, path)
    with pytest.raises(ValueError, match='not a dgcn checkpoint'):
        dgcn.nn.load_checkpoint(path)
    model = dgcn.nn.GCN(4, 8, 3)
    model.save_checkpoint(path)
    d = torch.load(path)
    d['model.conv9.weight'] = torch.zeros(2, 2)
    torch.save(d, path)
    with pytest.raises(ValueError, match=r"conv9\.weight"):
        dgcn.nn.load_checkpoint(path)
