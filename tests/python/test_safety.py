"""Wrong ids, shapes, dtypes and empty or non-contiguous tensors end in an
exception naming the argument, never in a crash: the cases of issue 28, and
safety_fuzz.py's randomised cases run in a subprocess (a segfault there
fails this test instead of ending pytest)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import dgcn


def test_gcnconv_n_id_out_of_range_is_an_index_error():
    conv = dgcn.nn.GCNConv(4, 8)
    x = torch.randn(100, 4)
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]])
    with pytest.raises(IndexError, match=r'n_id holds 1000000000, not a row '
                       r'of x in \[0, 100\)'):
        conv(x, ei, n_id=torch.tensor([0, 1, 10**9]))
    with pytest.raises(IndexError, match='n_id holds -1'):
        conv(x, ei, n_id=torch.tensor([0, -1, 2]))


def _counting_aminmax(monkeypatch):
    calls = []
    aminmax = torch.aminmax
    monkeypatch.setattr(torch, 'aminmax',
                        lambda *a, **k: calls.append(1) or aminmax(*a, **k))
    return calls


def test_loader_n_id_is_not_bounded_again(cora_store, monkeypatch):
    # A batch's n_id holds the store's nodes: GCNConv skips its bound read
    # (a GPU sync where n_id lives on the device) while n_id is unchanged;
    # written in place, it is checked again and refused.
    loader = dgcn.loader.NeighborLoader(cora_store, num_neighbors=[5],
                                        batch_size=16, gather_features=False)
    batch = next(iter(loader))
    conv = dgcn.nn.GCNConv(cora_store.num_features, 4)
    calls = _counting_aminmax(monkeypatch)
    want = conv(cora_store.x[batch.n_id], batch.edge_index, deg=batch.deg)
    got = conv(cora_store.x, batch.edge_index, deg=batch.deg, n_id=batch.n_id)
    torch.testing.assert_close(got, want)
    assert calls == []
    # Fewer rows of x than the store's nodes: the mark does not bound them.
    small = cora_store.x[:int(batch.n_id.max())]
    with pytest.raises(IndexError, match='n_id holds'):
        conv(small, batch.edge_index, deg=batch.deg, n_id=batch.n_id)
    batch.n_id[0] = 10**9
    with pytest.raises(IndexError, match='n_id holds 1000000000'):
        conv(cora_store.x, batch.edge_index, deg=batch.deg, n_id=batch.n_id)


def test_n_id_on_a_device_is_bounded_by_the_spmm(monkeypatch):
    # On a GPU GCNConv leaves n_id's bound to the SpMM's own read (one read
    # a call, not two): the same errors, also past int32 (no narrowing).
    monkeypatch.setattr(dgcn.nn, '_n_id_bounded_by_spmm', lambda n_id: True)
    conv = dgcn.nn.GCNConv(4, 8)
    x = torch.randn(100, 4)
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]])
    calls = _counting_aminmax(monkeypatch)
    n_id = torch.tensor([5, 7, 9])
    torch.testing.assert_close(conv(x, ei, n_id=n_id), conv(x[n_id], ei))
    assert calls == []
    for bad, value in ((10**9, '1000000000'), (-1, '-1'), (2**32 + 1, '')):
        with pytest.raises(IndexError, match=f'n_id holds {value}'):
            conv(x, ei, n_id=torch.tensor([0, bad, 2]))


def test_spmm_column_ids_are_checked():
    ei = torch.tensor([[0, 1, 2, 150], [1, 2, 0, 3]])
    rowptr, col, value = dgcn.nn.gcn_norm(ei, 200)
    x = torch.randn(200, 3)
    torch.ops.dgcn.spmm(rowptr, col, value, x)  # valid
    with pytest.raises(IndexError, match=r'spmm: col holds 199, not a row of '
                       r'x in \[0, 100\)'):
        torch.ops.dgcn.spmm(rowptr, col, value, x[:100])
    bad = rowptr.clone()
    bad[5] = 10**6
    with pytest.raises(ValueError, match='rowptr must not decrease'):
        torch.ops.dgcn.spmm(bad, col, value, x)
    with pytest.raises(TypeError, match='value must be float32'):
        torch.ops.dgcn.spmm(rowptr, col, value.double(), x)
    with pytest.raises(ValueError, match='value must be 1-D, one per col'):
        torch.ops.dgcn.spmm(rowptr, col, value[1:], x)


def test_gcn_norm_errors_are_typed():
    with pytest.raises(TypeError, match='edge_index must be int64'):
        dgcn.nn.gcn_norm(torch.tensor([[0], [1]], dtype=torch.int32), 2)
    with pytest.raises(IndexError, match=r'edge_index\[:, 0\] = \(0, 7\)'):
        dgcn.nn.gcn_norm(torch.tensor([[0], [7]]), 2)
    with pytest.raises(TypeError, match='deg must hold integers'):
        dgcn.nn.gcn_norm(torch.tensor([[0], [1]]), 2, torch.ones(2))


@pytest.mark.parametrize('seed', [0, 1])
def test_randomised_bad_inputs_raise_never_crash(seed):
    script = Path(__file__).with_name('safety_fuzz.py')
    cases = int(os.environ.get('DGCN_FUZZ_CASES', '1500'))
    run = subprocess.run(
        [sys.executable, str(script), '--cases', str(cases), '--seed',
         str(seed)], capture_output=True, text=True, timeout=600)
    assert run.returncode >= 0, (f'the fuzz process died of signal '
                                 f'{-run.returncode}:\n{run.stderr[-3000:]}')
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr[-3000:]
    result = json.loads(lines[-1])
    print(f"safety_fuzz seed {seed}: {result['cases']} cases "
          f"{result['per_target']}")
    assert result['num_failures'] == 0, '\n'.join(result['failures'])
    assert run.returncode == 0
    assert result['cases'] == cases
    assert len(result['per_target']) == 11, result['per_target']
