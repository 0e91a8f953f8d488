"""GCN layers over dgcn's SpMM (``torch.ops.dgcn.spmm``, with autograd)."""
import math
from typing import Optional

import torch
from torch import Tensor

from . import _C

__all__ = ['GCNConv', 'gcn_norm']


def gcn_norm(edge_index: Tensor, num_nodes: int,
             deg: Optional[Tensor] = None):
    r"""The normalized adjacency :math:`\hat{A}` of :obj:`edge_index` as CSR
    tensors ``(rowptr, col, value)``, row ``i`` aggregating into node ``i``
    (``models/gcn_norm.h``).

    Without :obj:`deg`: self-loops and symmetric normalization by in-degree,
    as :func:`torch_geometric.nn.conv.gcn_conv.gcn_norm`. With :obj:`deg`
    (every node's degree in the full graph, e.g. a :class:`NeighborLoader`
    batch's ``deg``): dgcn's unbiased normalization of a sampled batch, each
    sampled row rescaled by ``deg / sampled``.
    """
    return torch.ops.dgcn.gcn_norm(edge_index, num_nodes, deg)


class GCNConv(torch.nn.Module):
    r"""The graph convolution of Kipf and Welling,
    :math:`\mathbf{X}' = \hat{A} \mathbf{X} \mathbf{\Theta} + b`, computed
    with dgcn's SpMM: :class:`torch_geometric.nn.GCNConv` with its default
    options, the same parameters (``lin.weight``, ``bias``) and results.

    Args:
        in_channels (int): size of each input sample.
        out_channels (int): size of each output sample.
        bias (bool, optional): learn an additive bias. (default: :obj:`True`)
        cached (bool, optional): keep :math:`\hat{A}` of the first call (a
            full graph, transductive learning). (default: :obj:`False`)

    ``forward(x, edge_index, deg=None)``: :obj:`deg` selects the unbiased
    normalization of a sampled batch (:func:`gcn_norm`).
    """
    def __init__(self, in_channels: int, out_channels: int, bias: bool = True,
                 cached: bool = False):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.cached = cached
        self._cached_adj = None
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(out_channels))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        # Glorot weights, zero bias: PyG's GCNConv defaults.
        bound = math.sqrt(6.0 / (self.in_channels + self.out_channels))
        torch.nn.init.uniform_(self.lin.weight, -bound, bound)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        self._cached_adj = None

    def forward(self, x: Tensor, edge_index: Tensor,
                deg: Optional[Tensor] = None) -> Tensor:
        adj = self._cached_adj
        if adj is None:
            adj = gcn_norm(edge_index, x.size(0), deg)
            if self.cached:
                self._cached_adj = adj
        rowptr, col, value = adj
        if _C.aggregate_first(x.size(0), x.size(0), col.numel(),
                              self.in_channels, self.out_channels,
                              self.training, x.requires_grad):
            out = self.lin(torch.ops.dgcn.spmm(rowptr, col, value, x))
        else:
            out = torch.ops.dgcn.spmm(rowptr, col, value, self.lin(x))
        if self.bias is not None:
            out = out + self.bias
        return out

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels})')
