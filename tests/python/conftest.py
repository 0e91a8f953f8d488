"""Fixtures of the `dgcn` Python package's tests: Cora as a `.gcn` store made
by dgcn-prep (skipped where the dataset or the binary is absent) and small
graphs drawn by hand."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

SOURCE_DIR = Path(os.environ.get('DGCN_SOURCE_DIR',
                                 Path(__file__).resolve().parents[2]))


def _cora_npz() -> Path:
    return Path(os.environ.get('DGCN_CORA_NPZ', SOURCE_DIR.parent / 'shared' /
                               'datasets' / 'cora.npz'))


def _prep_binary() -> str:
    build = Path(os.environ.get('DGCN_BUILD_DIR', SOURCE_DIR / 'build'))
    path = build / 'bin' / 'dgcn-prep'
    if path.exists():
        return str(path)
    return shutil.which('dgcn-prep')


@pytest.fixture(scope='session')
def cora_path(tmp_path_factory) -> Path:
    npz = _cora_npz()
    if not npz.exists():
        pytest.skip(f'no Cora dataset at {npz}')
    prep = _prep_binary()
    if prep is None:
        pytest.skip('no dgcn-prep binary (build the C++ first)')
    out = tmp_path_factory.mktemp('cora') / 'cora.gcn'
    subprocess.run([prep, 'npz', '--file', str(npz), '--out', str(out),
                    '--threads', '2'], check=True, capture_output=True)
    return out


@pytest.fixture(scope='session')
def cora_store(cora_path):
    import dgcn
    return dgcn.data.open_store(cora_path)


@pytest.fixture(scope='session')
def cora_data(cora_store):
    import dgcn
    return dgcn.data.to_pyg(cora_store)


@pytest.fixture
def small_data():
    """8 nodes, undirected, hand-drawn: a 4-cycle 0-1-2-3, a star 4-{5,6,7}
    and the bridge 3-4; node 7 unlabelled."""
    from torch_geometric.data import Data
    from torch_geometric.utils import to_undirected
    edges = torch.tensor([[0, 1, 2, 3, 3, 4, 4, 4],
                          [1, 2, 3, 0, 4, 5, 6, 7]])
    edge_index = to_undirected(edges)
    x = torch.arange(8 * 3, dtype=torch.float).view(8, 3)
    y = torch.tensor([0, 1, 0, 1, 2, 2, 0, -1])
    train_mask = torch.tensor([1, 1, 1, 1, 0, 0, 0, 0], dtype=torch.bool)
    val_mask = torch.tensor([0, 0, 0, 0, 1, 1, 0, 0], dtype=torch.bool)
    test_mask = torch.tensor([0, 0, 0, 0, 0, 0, 1, 0], dtype=torch.bool)
    return Data(x=x, y=y, edge_index=edge_index, train_mask=train_mask,
                val_mask=val_mask, test_mask=test_mask)
