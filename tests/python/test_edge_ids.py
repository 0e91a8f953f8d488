"""NeighborLoader batches' e_id, with PyG's meaning: each sampled edge's
column of the input Data's edge_index (of a store, its CSR position), and
the Data's edge-level attributes sliced by it."""
import pytest
import torch

import dgcn

pytest.importorskip('torch_geometric', reason='batches are PyG Data')


def _global_edges(batch):
    ei = torch.as_tensor(batch.edge_index)
    return torch.stack([batch.n_id[ei[0]], batch.n_id[ei[1]]])


def _shuffled_with_repeats(cora_data):
    # Cora's edges in a random column order, some twice, plus self-loops
    # (from_pyg drops both), and a distinct attribute per column.
    g = torch.Generator().manual_seed(3)
    ei = cora_data.edge_index
    extra = ei[:, torch.randint(ei.size(1), (500, ), generator=g)]
    loops = torch.arange(40).repeat(2, 1)
    ei = torch.cat([ei, extra, loops], 1)
    ei = ei[:, torch.randperm(ei.size(1), generator=g)]
    data = cora_data.clone()
    data.edge_index = ei
    data.edge_attr = torch.randn(ei.size(1), 3, generator=g)
    data.edge_weight = torch.rand(ei.size(1), generator=g)
    return data


@pytest.mark.parametrize('replace', [False, True])
def test_e_id_are_columns_of_the_datas_edge_index(cora_data, replace):
    data = _shuffled_with_repeats(cora_data)
    loader = dgcn.loader.NeighborLoader(data, [10, 5], batch_size=128,
                                        shuffle=True, replace=replace)
    batches = 0
    for batch in loader:
        batches += 1
        assert batch.e_id.numel() == batch.edge_index.size(1) > 0
        assert torch.equal(data.edge_index[:, batch.e_id],
                           _global_edges(batch))
        assert torch.equal(batch.edge_attr, data.edge_attr[batch.e_id])
        assert torch.equal(batch.edge_weight, data.edge_weight[batch.e_id])
        # Of repeated edges, the first column (what from_pyg kept).
        first = {}
        for c, (u, v) in enumerate(data.edge_index.t().tolist()):
            first.setdefault((u, v), c)
        if batches == 1:
            for c, (u, v) in zip(batch.e_id.tolist(),
                                 _global_edges(batch).t().tolist()):
                assert c == first[(u, v)]
    assert batches == len(loader) == 22


def test_e_id_of_a_store_is_the_csr_position(cora_store):
    rowptr, col = cora_store.rowptr.long(), cora_store.col.long()
    row = torch.repeat_interleave(torch.arange(cora_store.num_nodes),
                                  rowptr[1:] - rowptr[:-1])
    # A store's batches carry e_id when asked (the search costs time).
    assert 'e_id' not in next(iter(dgcn.loader.NeighborLoader(
        cora_store, [5], batch_size=500)))
    loader = dgcn.loader.NeighborLoader(cora_store, [-1, 5], batch_size=500,
                                        edge_ids=True)
    seen = torch.zeros(col.numel(), dtype=torch.bool)
    for batch in loader:
        src, dst = _global_edges(batch)
        assert torch.equal(col[batch.e_id], src)
        assert torch.equal(row[batch.e_id], dst)
        seen[batch.e_id] = True
    # Every node's whole first hop ([-1, ...]): every edge is sampled.
    assert bool(seen.all())


def test_e_id_with_rows_not_sorted(cora_data):
    # A store whose CSR rows are not ascending: its rows are scanned.
    from dgcn._edge_ids import EdgeIds

    store = dgcn.data.from_pyg(cora_data)
    rowptr, col = store.rowptr.long(), store.col.long()

    class Unsorted:
        num_nodes = store.num_nodes

    Unsorted.rowptr = rowptr
    Unsorted.col = torch.cat([col[rowptr[v]:rowptr[v + 1]].flip(0)
                              for v in range(store.num_nodes)])
    ids = EdgeIds(Unsorted)
    assert not ids.rows_sorted
    batch = next(iter(dgcn.loader.NeighborLoader(store, [5],
                                                 batch_size=300,
                                                 edge_ids=False)))
    pos = ids(batch.n_id, batch.edge_index)
    src, dst = _global_edges(batch)
    assert torch.equal(Unsorted.col[pos], src)
    assert bool(((pos >= rowptr[dst]) & (pos < rowptr[dst + 1])).all())
