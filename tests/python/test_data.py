"""dgcn.data: stores as tensors, to and from PyG's Data."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import dgcn
from conftest import _cora_npz


def test_store_tensors_share_the_store(cora_store):
    s = cora_store
    assert s.num_nodes == 2708
    assert s.x.shape == (s.num_nodes, s.num_features)
    assert s.x.dtype == torch.float32
    # No copy: two accesses alive at once see the same memory (a copy per
    # access could not reuse the first copy's freed address here).
    x1, x2 = s.x, s.x
    assert x1.data_ptr() == x2.data_ptr()
    rowptr1, rowptr2 = s.rowptr, s.rowptr
    assert rowptr1.data_ptr() == rowptr2.data_ptr()
    assert s.rowptr.shape == (s.num_nodes + 1,)
    assert int(s.rowptr[-1]) == s.num_edges == s.col.numel()
    assert torch.equal(s.degree.long(), s.rowptr[1:] - s.rowptr[:-1])


def test_tensor_keeps_store_alive(cora_path):
    store = dgcn.data.open_store(cora_path)
    x = store.x
    expected = x.sum().item()
    del store
    import gc
    gc.collect()
    torch.empty(1 << 20).fill_(7.0)  # reuse freed memory, if it were freed
    assert x.sum().item() == expected


def test_mapped_store_equals_private(cora_path, tmp_path):
    import shutil
    path = tmp_path / 'cora.gcn'
    shutil.copy(cora_path, path)
    private = dgcn.data.open_store(path)
    mapped = dgcn.data.open_store(path, mmap=True)
    assert mapped.mapped
    assert torch.equal(private.x, mapped.x)
    assert torch.equal(private.col, mapped.col)
    assert private.content_digest() == mapped.content_digest()


def test_mapped_store_keeps_its_cache_in_cache_dir(cora_path, tmp_path):
    import shutil
    store_dir, cache_dir = tmp_path / 'store', tmp_path / 'cache'
    store_dir.mkdir()
    cache_dir.mkdir()
    path = store_dir / 'cora.gcn'
    shutil.copy(cora_path, path)
    mapped = dgcn.data.open_store(path, mmap=True, cache_dir=cache_dir)
    assert mapped.mapped
    assert [p.name for p in store_dir.iterdir()] == ['cora.gcn']
    assert any(p.name.endswith('.cache') for p in cache_dir.iterdir())
    assert torch.equal(mapped.x, dgcn.data.open_store(path).x)
    with pytest.raises(ValueError, match='cache_dir'):
        dgcn.data.open_store(path, cache_dir=cache_dir)


def test_to_pyg_matches_the_npz(cora_data):
    npz = np.load(_cora_npz(), allow_pickle=False)
    adj = sp.csr_matrix((npz['adj_data'], npz['adj_indices'],
                         npz['adj_indptr']), shape=tuple(npz['adj_shape']))
    adj = ((adj + adj.T) > 0).astype(np.float32).tolil()
    adj.setdiag(0)
    adj = adj.tocoo()
    adj.eliminate_zeros()
    want = set(zip(adj.row.tolist(), adj.col.tolist()))
    got = set(map(tuple, cora_data.edge_index.t().tolist()))
    assert got == want
    assert cora_data.is_undirected()
    assert not cora_data.has_self_loops()
    labels = torch.from_numpy(npz['labels'].astype(np.int64))
    assert torch.equal(cora_data.y, labels)
    x = sp.csr_matrix((npz['attr_data'], npz['attr_indices'],
                       npz['attr_indptr']), shape=tuple(npz['attr_shape']))
    assert torch.equal(cora_data.x, torch.from_numpy(x.toarray()).float())
    masks = [cora_data.train_mask, cora_data.val_mask, cora_data.test_mask]
    assert [int(m.sum()) for m in masks] == [20 * 7, 500, 1000]
    assert int((masks[0] & masks[1]).sum() + (masks[1] & masks[2]).sum()) == 0
    cora_data.validate(raise_on_error=True)


def test_from_pyg_round_trip(cora_store, cora_data, tmp_path):
    store = dgcn.data.from_pyg(cora_data)
    # The same data, whatever the path it took (graph, features, labels,
    # splits, degrees: GraphStore content_digest).
    assert store.content_digest() == cora_store.content_digest()
    store.save(tmp_path / 'again.gcn')
    again = dgcn.data.open_store(tmp_path / 'again.gcn')
    assert again.content_digest() == cora_store.content_digest()


def test_from_pyg_small_graph(small_data):
    store = dgcn.data.from_pyg(small_data)
    back = dgcn.data.to_pyg(store)
    assert store.num_nodes == 8 and store.num_classes == 3
    assert torch.equal(back.x, small_data.x)
    assert torch.equal(back.y, small_data.y)
    assert back.edge_index.size(1) == small_data.edge_index.size(1)
    assert set(map(tuple, back.edge_index.t().tolist())) == set(
        map(tuple, small_data.edge_index.t().tolist()))
    for name in ['train_mask', 'val_mask', 'test_mask']:
        assert torch.equal(back[name], small_data[name])


def test_from_pyg_directed_keeps_direction():
    from torch_geometric.data import Data
    data = Data(edge_index=torch.tensor([[0, 0, 1, 2, 2], [1, 2, 2, 2, 1]]),
                num_nodes=3)
    store = dgcn.data.from_pyg(data)
    back = dgcn.data.to_pyg(store)
    # Self-loop 2->2 dropped, direction kept: row v lists v's sources.
    assert set(map(tuple, back.edge_index.t().tolist())) == {(0, 1), (0, 2),
                                                             (1, 2), (2, 1)}
    assert store.degree.tolist() == [0, 2, 2]


def test_version():
    assert dgcn.__version__.count('.') == 2


def test_read_npz_is_dgcn_prep_npz(cora_store):
    # The same reader, split and seed as the fixture's `dgcn-prep npz`.
    store = dgcn.data.read_npz(_cora_npz(), num_threads=2)
    assert store.content_digest() == cora_store.content_digest()
    other = dgcn.data.read_npz(_cora_npz(), seed=1, num_threads=2)
    assert not torch.equal(other.train_index, cora_store.train_index)
    with pytest.raises(ValueError, match='per-class'):
        dgcn.data.read_npz(_cora_npz(), split='per-klass:20')
    with pytest.raises(FileNotFoundError, match='nowhere.npz'):
        dgcn.data.read_npz('/nowhere.npz')


def _write_csv_gz(path, lines):
    import gzip
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, 'wt') as f:
        f.write(''.join(f'{line}\n' for line in lines))


def test_read_ogb_reads_the_ogb_layout(tmp_path):
    # A 4-node ogbn-style folder: a path 0-1-2-3, one unlabelled node.
    raw = tmp_path / 'raw'
    _write_csv_gz(raw / 'edge.csv.gz', ['0,1', '1,2', '2,3'])
    _write_csv_gz(raw / 'node-feat.csv.gz', ['1,0', '0,1', '1,1', '0,0'])
    _write_csv_gz(raw / 'node-label.csv.gz', ['0', '1', 'nan', '1'])
    _write_csv_gz(raw / 'num-node-list.csv.gz', ['4'])
    _write_csv_gz(raw / 'num-edge-list.csv.gz', ['3'])
    split = tmp_path / 'split' / 'sales_ranking'
    _write_csv_gz(split / 'train.csv.gz', ['0', '1'])
    _write_csv_gz(split / 'valid.csv.gz', ['2'])
    _write_csv_gz(split / 'test.csv.gz', ['3'])
    store = dgcn.data.read_ogb(tmp_path, num_threads=1)
    assert store.num_nodes == 4 and store.num_edges == 6  # symmetrized
    assert store.labels.tolist() == [0, 1, -1, 1]
    assert store.train_index.tolist() == [0, 1]
    assert torch.equal(store.x, torch.tensor([[1., 0], [0, 1], [1, 1],
                                              [0, 0]]))
    _write_csv_gz(raw / 'num-node-list.csv.gz', ['5'])
    with pytest.raises(RuntimeError, match='node-feat'):
        dgcn.data.read_ogb(tmp_path, num_threads=1)


def test_from_pyg_labels_follow_the_readers_rule():
    # datasets/store_assembly.h: -1 is unlabelled, any other negative value
    # is refused naming the node, and a y without a labelled node is too.
    from torch_geometric.data import Data
    ei = torch.tensor([[0, 1, 2], [1, 2, 0]])
    store = dgcn.data.from_pyg(Data(edge_index=ei, y=torch.tensor([2, -1, 0]),
                                    num_nodes=3))
    assert store.num_classes == 3
    assert store.labels.tolist() == [2, -1, 0]
    with pytest.raises(ValueError, match=r'y\[1\] = -5 is not a class id'):
        dgcn.data.from_pyg(Data(edge_index=ei, y=torch.tensor([2, -5, 0]),
                                num_nodes=3))
    with pytest.raises(ValueError, match='no node has a label'):
        dgcn.data.from_pyg(Data(edge_index=ei, y=torch.full((3, ), -1),
                                num_nodes=3))
