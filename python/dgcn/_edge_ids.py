"""PyG's ``e_id`` for :class:`~dgcn.loader.NeighborLoader` batches.

The sampler (``sampling/``) reports each sampled edge as a (neighbour,
node) pair of the batch, not as the edge's position in the store. Finding
the position again is a binary search in the node's CSR row, done here with
torch ops over the batch's edges, so the sampler's speed and determinism
are left as they are.
"""
from typing import Optional

import torch
from torch import Tensor

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
        self.rowptr = store.rowptr.long()
        col = store.col.long()
        degree = self.rowptr.diff()
        self.order: Optional[Tensor] = None
        is_sorted = _rows_sorted(self.rowptr, col)
        # Each CSR position's row, for the sort and the data's keys (once).
        rows = None if is_sorted and data is None else (
            torch.repeat_interleave(torch.arange(store.num_nodes), degree))
        if not is_sorted:
            self.order = torch.argsort(rows * store.num_nodes + col,
                                       stable=True)
            col = col[self.order]
        self.col = col
        top = int(degree.max()) if degree.numel() else 0
        self.steps = max(top, 1).bit_length()  # a search of a row: <= this
        self.key: Optional[Tensor] = None  # with data: dst * n + src, sorted
        self.column = None if data is None else self._columns(
            store, data, rows)

    def _columns(self, store, data, rows: Tensor) -> Tensor:
        # The data's column of every CSR position (from_pyg dropped loops
        # and repeats: of these, the first column).
        n = store.num_nodes
        src, dst = data.edge_index[0].long(), data.edge_index[1].long()
        keep = (src != dst).nonzero().view(-1)
        key = dst[keep] * n + src[keep]
        key, order = torch.sort(key, stable=True)
        first = torch.ones_like(key, dtype=torch.bool)
        first[1:] = key[1:] != key[:-1]
        key, columns = key[first], keep[order[first]]
        csr_key = rows * n + self.col  # ascending: rows sorted above
        if not torch.equal(csr_key, key):
            raise RuntimeError("NeighborLoader: the store's edges are not "
                               "the data's edge_index (e_id cannot map)")
        self.key = key  # a Data is in memory: its keys may be too
        return columns  # by position in the row-sorted self.col

    def __call__(self, n_id: Tensor, edge_index: Tensor) -> Tensor:
        src = n_id[edge_index[0]]
        dst = n_id[edge_index[1]]
        if self.key is not None:
            # One search over every edge's key: one C++ op, where the row
            # search below is ~10 torch ops per step.
            want = dst * (self.rowptr.numel() - 1) + src
            at = torch.searchsorted(self.key, want).clamp(
                max=max(self.key.numel() - 1, 0))
            if not bool((self.key[at] == want).all()):
                raise RuntimeError("NeighborLoader: a sampled edge is not "
                                   "in the data's edge_index")
            return self.column[at]
        lo, end = self.rowptr[dst], self.rowptr[dst + 1]
        hi = end.clone()
        last = max(self.col.numel() - 1, 0)
        for _ in range(self.steps + 1):
            open_ = lo < hi
            mid = (lo + hi) // 2
            below = self.col[mid.clamp(max=last)] < src
            lo = torch.where(open_ & below, mid + 1, lo)
            hi = torch.where(open_ & ~below, mid, hi)
        found = lo < end
        found[found.clone()] = self.col[lo[found]] == src[found]
        if not bool(found.all()):
            bad = int((~found).nonzero()[0])
            raise RuntimeError(
                f"NeighborLoader: sampled edge {bad} ({int(src[bad])} -> "
                f"{int(dst[bad])}) is not in the store's CSR row")
        if self.column is not None:
            return self.column[lo]
        return lo if self.order is None else self.order[lo]
