"""PyG's ``e_id`` for :class:`~dgcn.loader.NeighborLoader` batches.

The sampler (``sampling/``) reports each sampled edge as a (neighbour,
node) pair of the batch, not as the edge's position in the store. Finding
the position again is a search in the node's CSR row per sampled edge
(``sampling/edge_positions.h``, one C++ call per batch reading only those
rows), so the sampler's speed and determinism are left as they are.
"""

import torch
from torch import Tensor

from . import _C
from ._csr import target_of_entries

_CHUNK = 1 << 24  # entries per step of the one-time sortedness check


def _rows_sorted(rowptr: Tensor, col: Tensor) -> bool:
    # A CSR row's columns ascending, in bounded memory (col may be a
    # mapped store's hundreds of millions of entries).
    num_edges = col.numel()
    row_start = torch.zeros(num_edges + 1, dtype=torch.bool)
    row_start[rowptr] = True
    for begin in range(0, max(num_edges - 1, 0), _CHUNK):
        end = min(begin + _CHUNK, num_edges - 1)
        down = col[begin + 1:end + 1] < col[begin:end]
        if bool((down & ~row_start[begin + 1:end + 1]).any()):
            return False
    return True


class EdgeIds:
    r"""Maps a batch's sampled edges to ``e_id``: their CSR positions in
    :obj:`store`, or, with :obj:`data` (the PyG ``Data`` the store was made
    from by :func:`dgcn.data.from_pyg`), their columns of
    ``data.edge_index``. Of repeated edges, which the store keeps once
    (``from_pyg``) or several times (``--keep-duplicates``), the first."""
    def __init__(self, store, data=None):
        # The store's own arrays (a mapped store's: no copy of the graph).
        self.rowptr = store.rowptr.long()
        self.col = store.col
        # Once: sorted rows are binary searched, others scanned.
        self.rows_sorted = _rows_sorted(self.rowptr, self.col)
        self.column = None if data is None else self._columns(store, data)

    def _columns(self, store, data) -> Tensor:
        # The data's column of every CSR position (from_pyg dropped loops
        # and repeats: of these, the first column); a Data is in memory, so
        # the CSR's keys may be too, once.
        n = store.num_nodes
        src, dst = data.edge_index[0].long(), data.edge_index[1].long()
        keep = (src != dst).nonzero().view(-1)
        key = dst[keep] * n + src[keep]
        key, order = torch.sort(key, stable=True)
        first = torch.ones_like(key, dtype=torch.bool)
        first[1:] = key[1:] != key[:-1]
        key, columns = key[first], keep[order[first]]
        rows = target_of_entries(self.rowptr)
        csr_key = rows * n + self.col.long()
        if not torch.equal(csr_key, key):  # (so the store's rows are sorted)
            raise RuntimeError("NeighborLoader: the store's edges are not "
                               "the data's edge_index (e_id cannot map)")
        return columns  # by CSR position

    def __call__(self, n_id: Tensor, edge_index: Tensor) -> Tensor:
        src = n_id[edge_index[0]]
        dst = n_id[edge_index[1]]
        pos = _C.csr_positions(self.rowptr, self.col, src, dst,
                               self.rows_sorted)
        return pos if self.column is None else self.column[pos]
