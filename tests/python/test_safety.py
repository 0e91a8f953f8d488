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
