"""dgcn.nn.GATConv: PyG's graph attention layer over dgcn's SpMM."""
import math
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from ._csr import (check_edge_index, csr_by_target, num_rows,
                   target_of_entries, with_self_loops)
from ._sage import check_channels, check_features, linear

__all__ = ['GATConv']


def _glorot(t: Tensor) -> None:
    # PyG's inits.glorot: uniform in +-sqrt(6 / (rows + cols)) of the last
    # two dimensions.
    bound = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
    torch.nn.init.uniform_(t, -bound, bound)


def _uninitialized(lin) -> bool:
    return lin is not None and isinstance(
        lin.weight, torch.nn.parameter.UninitializedParameter)


def _block_diagonal(att: Tensor) -> Tensor:
    r"""The attention vectors :obj:`att` ``[1, H, C]`` as the ``[H*C, H]``
    matrix whose column ``k`` holds head ``k``'s vector in rows
    ``k*C .. (k+1)*C`` (differentiable in :obj:`att`)."""
    return torch.block_diag(*att[0].unsqueeze(-1))


def edge_softmax(score: Tensor, rowptr: Tensor, target: Tensor) -> Tensor:
    r"""Softmax of :obj:`score` ``[E, H]`` over each CSR row's entries (each
    node's incoming edges), as PyG's ``softmax(src, index)``: shifted by the
    row's largest score (a constant per row, so no gradient flows through
    it), divided by the row's sum plus ``1e-16``."""
    rows, heads = rowptr.numel() - 1, score.size(1)
    index = target.unsqueeze(1).expand(-1, heads)
    top = score.new_full((rows, heads), float('-inf')).scatter_reduce_(
        0, index, score.detach(), 'amax')
    ex = (score - top.index_select(0, target)).exp()
    total = score.new_zeros(rows, heads).index_add_(0, target, ex)
    return ex / (total.index_select(0, target) + 1e-16)


class GATConv(torch.nn.Module):
    r"""The graph attentional operator of Veličković et al.,
    :math:`\mathbf{x}'_i = \sum_{j \in \mathcal{N}(i) \cup \{ i \}}
    \alpha_{i,j} \mathbf{\Theta} \mathbf{x}_j`, per head, the products
    computed with dgcn's SpMM: the signature, options, parameters
    (``att_src``, ``att_dst``, ``bias``, ``lin.weight``; ``lin_src`` and
    ``lin_dst`` for a pair of input widths) and results of
    :class:`torch_geometric.nn.GATConv`.

    Args (PyG's):
        in_channels (int or tuple): size of each input sample, ``-1``
            (inferred at the first call), or a pair (sources, targets),
            transformed by two weights.
        out_channels (int): size of each output sample per head.
        heads (int, optional): attention heads. (default: ``1``)
        concat (bool, optional): concatenate the heads, else average them.
            (default: :obj:`True`)
        negative_slope (float, optional): LeakyReLU's slope. (default: 0.2)
        dropout (float, optional): dropout of the attention coefficients
            in training. (default: ``0``)
        add_self_loops (bool, optional): replace every node's self-loops by
            one. (default: :obj:`True`)
        bias (bool, optional): learn an additive bias. (default: :obj:`True`)

    ``edge_dim`` other than :obj:`None`, ``residual=True`` and other
    :class:`~torch_geometric.nn.conv.MessagePassing` arguments raise
    :class:`NotImplementedError` naming the argument (``fill_value`` only
    fills edge features, which this layer does not take).

    ``forward(x, edge_index, edge_attr=None, size=None,
    return_attention_weights=None, *, num_dst=None)``: PyG's arguments
    (``edge_attr`` must be :obj:`None`; with ``return_attention_weights``
    set, also ``(edge_index, alpha)``: the edges with their self-loops,
    grouped by target, and their coefficients ``[E, heads]``), and dgcn's
    :obj:`num_dst`: compute only the first rows (see :func:`trim_to_layer`).
    """
    def __init__(self, in_channels: Union[int, Tuple[int, int]],
                 out_channels: int, heads: int = 1, concat: bool = True,
                 negative_slope: float = 0.2, dropout: float = 0.0,
                 add_self_loops: bool = True, edge_dim: Optional[int] = None,
                 fill_value='mean', bias: bool = True, residual: bool = False,
                 **kwargs):
        super().__init__()
        if edge_dim is not None:
            raise NotImplementedError(
                f"GATConv: edge_dim={edge_dim!r} is not supported by dgcn's "
                f"GATConv (no edge features: edge_dim=None only)")
        if residual:
            raise NotImplementedError(
                "GATConv: residual=True is not supported by dgcn's GATConv")
        for key, value in kwargs.items():
            if not (key == 'aggr' and value == 'add') and not (
                    key == 'flow' and value == 'source_to_target'):
                raise NotImplementedError(
                    f"GATConv: {key}={value!r} is not supported by dgcn's "
                    f"GATConv (it sums messages source -> target)")
        check_channels('GATConv', in_channels, out_channels)
        if not isinstance(heads, int) or heads < 1:
            raise ValueError(f"GATConv: heads = {heads!r}; expected an "
                             f"integer >= 1")
        if not 0 <= dropout < 1:
            raise ValueError(f"GATConv: dropout = {dropout} is not in [0, 1)")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.concat = concat
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.add_self_loops = add_self_loops
        self.edge_dim = edge_dim
        self.fill_value = fill_value
        self.residual = residual
        self.lin = self.lin_src = self.lin_dst = None
        if isinstance(in_channels, int):
            self.lin = linear(in_channels, heads * out_channels, False)
        else:
            self.lin_src = linear(in_channels[0], heads * out_channels, False)
            self.lin_dst = linear(in_channels[1], heads * out_channels, False)
        # Registered in PyG's order, so that state_dict lists PyG's keys in
        # PyG's order.
        self.att_src = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = torch.nn.Parameter(torch.empty(1, heads, out_channels))
        total = out_channels * (heads if concat else 1)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(total))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyG's: Glorot weights and attention vectors, zero bias.
        for lin in (self.lin, self.lin_src, self.lin_dst):
            if lin is not None and not _uninitialized(lin):
                _glorot(lin.weight)
        _glorot(self.att_src)
        _glorot(self.att_dst)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def _transform(self, lin, x: Tensor) -> Tensor:
        if _uninitialized(lin):
            lin.initialize_parameters(x)
            _glorot(lin.weight)
        if x.size(1) != lin.weight.size(1):
            raise ValueError(f"GATConv: x has {x.size(1)} features; this "
                             f"layer takes {lin.weight.size(1)}")
        return lin(x)

    def forward(self, x: Union[Tensor, Tuple[Tensor, Optional[Tensor]]],
                edge_index: Tensor, edge_attr: Optional[Tensor] = None,
                size: Optional[Tuple[int, int]] = None,
                return_attention_weights: Optional[bool] = None, *,
                num_dst: Optional[int] = None):
        if edge_attr is not None:
            raise NotImplementedError(
                "GATConv: edge_attr is not supported by dgcn's GATConv "
                "(edge_dim=None: no edge features)")
        pair = isinstance(x, (tuple, list))
        x_src, x_dst = x if pair else (x, None)
        check_features('GATConv', x_src)
        if x_dst is not None:
            check_features('GATConv', x_dst, 'x_dst')
        check_edge_index('GATConv', edge_index)
        rows = num_rows('GATConv', x_src, x_dst, size, num_dst)
        num_src, H, C = x_src.size(0), self.heads, self.out_channels
        if self.lin is not None:
            h_src = self._transform(self.lin, x_src)
            h_dst = (h_src if x_dst is None else self._transform(
                self.lin, x_dst))
        else:
            h_src = self._transform(self.lin_src, x_src)
            h_dst = (x_src if x_dst is None else x_dst)
            h_dst = self._transform(self.lin_dst, h_dst)
        if pair and x_dst is None:
            h_dst = None  # PyG: no target term in the scores
        # Each node's score terms, (h * att).sum(-1) per head as PyG's, as
        # one product with the attention vectors laid out block-diagonally
        # ([H*C, H]): a GEMM (and two in the backward pass) instead of
        # elementwise passes over [N, H, C]. One product serves both terms
        # when the targets are the sources' first rows.
        att_src = _block_diagonal(self.att_src)
        if h_dst is h_src:
            both = h_src @ torch.cat([att_src,
                                      _block_diagonal(self.att_dst)], 1)
            score, dst_score = both[:, :H], both[:rows, H:]
        else:
            score = h_src @ att_src
            dst_score = (None if h_dst is None else
                         h_dst.narrow(0, 0, rows) @ _block_diagonal(
                             self.att_dst))
        rowptr, col = csr_by_target('GATConv', edge_index, num_src, rows)
        if self.add_self_loops:
            # PyG: loops on the nodes that are both sources and targets.
            rowptr, col = with_self_loops(rowptr, col, min(num_src, rows))
        target = target_of_entries(rowptr)
        rowptr, col = rowptr.to(x_src.device), col.to(x_src.device)
        target = target.to(x_src.device)
        alpha = score.index_select(0, col)
        if dst_score is not None:
            alpha = alpha + dst_score.index_select(0, target)
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = edge_softmax(alpha, rowptr, target)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        # The weighted sum of every head in one pass over the edges
        # (models/gat_kernels.h through torch.ops.dgcn.gat_spmm).
        out = torch.ops.dgcn.gat_spmm(rowptr, col.int(), alpha, h_src)
        if not self.concat:
            out = out.view(rows, H, C).mean(1)
        if self.bias is not None:
            out = out + self.bias
        if return_attention_weights is not None:
            return out, (torch.stack([col, target]), alpha)
        return out

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels}, heads={self.heads})')
