"""Bad arguments and bad files end in ValueError / RuntimeError naming what
is wrong: never a crash or a hang."""
import pytest
import torch

import dgcn
from dgcn.loader import NeighborLoader


@pytest.mark.parametrize('fanouts, match', [
    ([], 'fanouts is empty'),
    ([15, -3], r'fanouts\[1\] = -3'),
    ([1.5], 'num_neighbors'),
    (5, 'num_neighbors'),
])
def test_bad_fanouts(cora_store, fanouts, match):
    with pytest.raises(ValueError, match=match):
        NeighborLoader(cora_store, num_neighbors=fanouts)


@pytest.mark.parametrize('batch_size', [0, -1])
def test_bad_batch_size(cora_store, batch_size):
    with pytest.raises(ValueError, match=f'batch_size = {batch_size}'):
        NeighborLoader(cora_store, num_neighbors=[5], batch_size=batch_size)


def test_bad_input_nodes(cora_store):
    n = cora_store.num_nodes
    with pytest.raises(ValueError, match=rf'input_nodes\[1\] = {n} is not a '
                       rf'node id in \[0, {n}\)'):
        NeighborLoader(cora_store, num_neighbors=[5],
                       input_nodes=torch.tensor([0, n]))
    with pytest.raises(ValueError, match=r'input_nodes\[0\] = -1'):
        NeighborLoader(cora_store, num_neighbors=[5],
                       input_nodes=torch.tensor([-1]))
    with pytest.raises(ValueError, match='integer node ids'):
        NeighborLoader(cora_store, num_neighbors=[5],
                       input_nodes=torch.tensor([0.0, 1.0]))
    with pytest.raises(ValueError, match='mask'):
        NeighborLoader(cora_store, num_neighbors=[5],
                       input_nodes=torch.ones(3, dtype=torch.bool))


def test_bad_rank(cora_store):
    with pytest.raises(ValueError, match='rank = 2 is not in'):
        list(NeighborLoader(cora_store, num_neighbors=[5], rank=2,
                            world_size=2))


def test_bad_workers(cora_store):
    with pytest.raises(ValueError, match='num_workers = -1'):
        NeighborLoader(cora_store, num_neighbors=[5], num_workers=-1)


def test_missing_files_are_file_not_found_errors(tmp_path):
    # As open() and torch.load: Python's FileNotFoundError, naming the path.
    path = tmp_path / 'nothing.gcn'
    with pytest.raises(FileNotFoundError, match='nothing.gcn') as e:
        dgcn.data.open_store(path)
    assert e.value.filename == str(path)
    missing = tmp_path / 'missing'
    for read in (dgcn.data.read_npz, dgcn.data.read_ogb,
                 dgcn.data.read_graphsaint,
                 lambda root: dgcn.data.read_planetoid(root, 'cora')):
        with pytest.raises(FileNotFoundError, match='missing'):
            read(missing)


def test_damaged_store(cora_path, tmp_path):
    data = bytearray(cora_path.read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = bytes(64)  # zero a stretch of some section
    bad = tmp_path / 'damaged.gcn'
    bad.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match='damaged.gcn'):
        dgcn.data.open_store(bad)
    truncated = tmp_path / 'truncated.gcn'
    truncated.write_bytes(bytes(data[:len(data) // 3]))
    with pytest.raises(RuntimeError, match='truncated.gcn'):
        dgcn.data.open_store(truncated)
    not_a_store = tmp_path / 'text.gcn'
    not_a_store.write_text('hello')
    with pytest.raises(RuntimeError, match='text.gcn'):
        dgcn.data.open_store(not_a_store)


def test_bad_tensors_for_the_ops():
    edge_index = torch.tensor([[0, 1], [1, 0]])
    with pytest.raises(TypeError, match='edge_index must be int64'):
        dgcn.nn.gcn_norm(edge_index.int(), 2)
    with pytest.raises(IndexError, match=r'edge_index\[:, 1\] = \(1, 5\)'):
        dgcn.nn.gcn_norm(torch.tensor([[0, 1], [1, 5]]), 2)
    rowptr, col, value = dgcn.nn.gcn_norm(edge_index, 2)
    with pytest.raises(TypeError, match='x must be float32'):
        torch.ops.dgcn.spmm(rowptr, col, value, torch.ones(2, 3).double())
    conv = dgcn.nn.GCNConv(3, 4)
    with pytest.raises(ValueError, match='x has 5 features'):
        conv(torch.ones(2, 5), edge_index)


def test_bad_pyg_data():
    from torch_geometric.data import Data
    with pytest.raises((ValueError, RuntimeError), match='edge_index'):
        dgcn.data.from_pyg(Data(edge_index=torch.tensor([[0, 7], [1, 0]]),
                                num_nodes=3))
    with pytest.raises(ValueError, match='x must be'):
        dgcn.data.from_pyg(Data(edge_index=torch.tensor([[0], [1]]),
                                x=torch.ones(5, 2), num_nodes=3))
