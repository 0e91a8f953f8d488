"""The edges of a layer as CSR rows by target, for SAGEConv and GATConv
(dgcn.nn): row ``i`` lists the sources of node ``i``'s incoming edges, the
form dgcn's SpMM (``torch.ops.dgcn.spmm``) multiplies. Built from a
NeighborLoader batch's CSC pointer without a sort, else from any [2, E]
edge_index with one stable sort by target (so each row keeps PyG's edge
order, and its sums their order)."""
from typing import Optional, Tuple

import torch
from torch import Tensor

__all__ = ['check_edge_index', 'csr_by_target', 'mean_weights', 'num_rows',
           'target_of_entries', 'with_self_loops']


def check_edge_index(layer: str, edge_index) -> None:
    r"""Raises, naming :obj:`layer`, unless :obj:`edge_index` is a [2, E]
    int64 tensor (or PyG's ``EdgeIndex``)."""
    if not isinstance(edge_index, Tensor) or (edge_index.layout
                                              != torch.strided):
        what = (type(edge_index).__name__ if not isinstance(
            edge_index, Tensor) else f'a {edge_index.layout} tensor')
        raise NotImplementedError(
            f"{layer}: edge_index is {what}; dgcn's {layer} takes a [2, E] "
            f"int64 tensor (or PyG's EdgeIndex), not a sparse adjacency")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{layer}: edge_index must be [2, E] (got "
                         f"{tuple(edge_index.shape)})")
    if edge_index.dtype != torch.int64:
        raise TypeError(f"{layer}: edge_index must be int64 (got "
                        f"{edge_index.dtype})")


def _bounds(layer: str, ids: Tensor, bound: int, what: str, row: int):
    if ids.numel() == 0:
        return
    low, high = torch.aminmax(ids)
    low, high = int(low), int(high)
    if low < 0 or high >= bound:
        raise IndexError(f"{layer}: edge_index[{row}] holds "
                         f"{low if low < 0 else high}, not {what} in "
                         f"[0, {bound})")


def csr_by_target(layer: str, edge_index: Tensor, num_src: int,
                  num_dst: int) -> Tuple[Tensor, Tensor]:
    r"""``(rowptr, col)``: the edges into the first :obj:`num_dst` nodes as
    CSR rows, ``rowptr`` int64 ``[num_dst + 1]``, ``col`` int64 source ids
    in ``[0, num_src)``. Every edge must target a node below
    :obj:`num_dst` (else :class:`IndexError`, as PyG's scatter would fail)."""
    from .nn import _colptr  # (nn imports this module's users)
    colptr = _colptr(edge_index)
    if colptr is not None and colptr.numel() >= num_dst + 1:
        # A NeighborLoader batch (or an EdgeIndex sorted by target): its CSC
        # form is the CSR by target, no sort.
        row = edge_index.as_tensor()[0]
        nnz = int(colptr[num_dst])
        if int(colptr[-1]) != nnz:
            raise IndexError(f"{layer}: edge_index has edges into nodes "
                             f">= {num_dst}, past the rows computed")
        col = row.narrow(0, 0, nnz)
        _bounds(layer, col, num_src, 'a source node id', 0)
        return colptr.narrow(0, 0, num_dst + 1), col
    edge_index = edge_index.as_tensor() if hasattr(
        edge_index, 'as_tensor') else edge_index
    src, dst = edge_index[0], edge_index[1]
    _bounds(layer, src, num_src, 'a source node id', 0)
    _bounds(layer, dst, num_dst, 'a target node id', 1)
    order = torch.argsort(dst, stable=True)
    rowptr = torch.zeros(num_dst + 1, dtype=torch.long, device=dst.device)
    rowptr[1:] = torch.bincount(dst, minlength=num_dst).cumsum(0)
    return rowptr, src.index_select(0, order)


def target_of_entries(rowptr: Tensor) -> Tensor:
    r"""Each CSR entry's row (its edge's target)."""
    rows = rowptr.numel() - 1
    return torch.repeat_interleave(
        torch.arange(rows, device=rowptr.device), rowptr.diff())


def with_self_loops(rowptr: Tensor, col: Tensor,
                    num_loops: int) -> Tuple[Tensor, Tensor]:
    r"""The CSR rows without their self-loops and with one loop ``i -> i``
    appended to each row ``i < num_loops``: PyG's ``remove_self_loops``
    then ``add_self_loops(num_nodes=num_loops)`` (which appends the loops
    after the edges, so each row keeps PyG's order). No sort: every kept
    entry moves by the loops before it less the entries dropped before it."""
    rows = rowptr.numel() - 1
    device = col.device
    target = target_of_entries(rowptr)
    keep = col != target
    kept_per_row = torch.zeros(rows, dtype=torch.long, device=device)
    kept_per_row.index_add_(0, target, keep.long())
    has_loop = (torch.arange(rows, device=device) < num_loops).long()
    new_rowptr = torch.zeros(rows + 1, dtype=torch.long, device=device)
    new_rowptr[1:] = (kept_per_row + has_loop).cumsum(0)
    kept_before = torch.cumsum(keep.long(), 0) - keep.long()
    # A kept entry's new place: its row's new start plus its rank among
    # the row's kept entries.
    row_kept_start = torch.zeros(rows + 1, dtype=torch.long, device=device)
    row_kept_start[1:] = kept_per_row.cumsum(0)
    rank = kept_before - row_kept_start.index_select(0, target)
    place = new_rowptr.index_select(0, target) + rank
    new_col = torch.empty(int(new_rowptr[-1]), dtype=col.dtype,
                          device=device)
    new_col[place[keep]] = col[keep]
    loops = torch.arange(num_loops, device=device)
    new_col[new_rowptr[1:num_loops + 1] - 1] = loops.to(col.dtype)
    return new_rowptr, new_col


def mean_weights(rowptr: Tensor) -> Tensor:
    r"""``1 / len(row)`` for every entry of each row: the SpMM that
    averages a row's neighbours (float32)."""
    counts = rowptr.diff()
    inv = 1.0 / counts.clamp(min=1).to(torch.float32)
    return torch.repeat_interleave(inv, counts)


def num_rows(layer: str, x_src: Tensor, x_dst: Optional[Tensor], size,
             num_dst: Optional[int]) -> int:
    r"""The rows a layer computes: PyG's (``size[1]``, else the target
    features' rows, else the source's), or dgcn's :obj:`num_dst`."""
    rows = x_src.size(0) if x_dst is None else x_dst.size(0)
    if size is not None:
        if (not isinstance(size, (tuple, list)) or len(size) != 2
                or size[0] != x_src.size(0)):
            raise ValueError(f"{layer}: size = {size!r}; expected "
                             f"(num_src = {x_src.size(0)}, num_dst)")
        if x_dst is not None and size[1] != x_dst.size(0):
            raise ValueError(f"{layer}: size[1] = {size[1]} but the target "
                             f"features have {x_dst.size(0)} rows")
        rows = int(size[1])
    if num_dst is not None:
        if not (isinstance(num_dst, int) and 0 <= num_dst <= rows):
            raise ValueError(f"{layer}: num_dst = {num_dst!r} is not in "
                             f"[0, {rows}]")
        rows = num_dst
    return rows
