"""dgcn.nn.SAGEConv: PyG's GraphSAGE layer with the mean over dgcn's SpMM."""
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import Tensor

from . import _C
from ._csr import check_edge_index, csr_by_target, mean_weights, num_rows

__all__ = ['SAGEConv']


def check_features(layer: str, x, name: str = 'x') -> None:
    if not isinstance(x, Tensor) or x.dim() != 2:
        got = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"{layer}: {name} must be a [num_nodes, "
                         f"in_channels] tensor (got {got})")
    if x.dtype != torch.float32:
        raise TypeError(f"{layer}: {name} must be float32 (got {x.dtype})")


def check_channels(layer: str, in_channels, out_channels) -> None:
    pair = in_channels if isinstance(in_channels, tuple) else (in_channels, )
    if len(pair) not in (1, 2) or not all(
            isinstance(c, int) and (c >= 1 or c == -1) for c in pair):
        raise ValueError(f"{layer}: in_channels = {in_channels!r}; expected "
                         f"an integer >= 1 or -1 (lazy), or a pair of them")
    if not isinstance(out_channels, int) or out_channels < 1:
        raise ValueError(f"{layer}: out_channels = {out_channels!r}; "
                         f"expected an integer >= 1")


def linear(in_channels: int, out_channels: int, bias: bool):
    if in_channels == -1:
        return torch.nn.LazyLinear(out_channels, bias=bias)
    return torch.nn.Linear(in_channels, out_channels, bias=bias)


def materialize(lin: torch.nn.Module, x: Tensor) -> bool:
    r"""Gives a lazy :obj:`lin` its input width from :obj:`x` (torch's
    LazyLinear initialization: Kaiming uniform, PyG's Linear default);
    ``True`` when it did."""
    if isinstance(lin.weight, torch.nn.parameter.UninitializedParameter):
        lin.initialize_parameters(x)
        return True
    return False


class SAGEConv(torch.nn.Module):
    r"""The GraphSAGE operator,
    :math:`\mathbf{x}'_i = \mathbf{W}_1 \mathbf{x}_i + \mathbf{W}_2 \cdot
    \mathrm{mean}_{j \in \mathcal{N}(i)} \mathbf{x}_j`, the mean computed
    with dgcn's SpMM (weights ``1 / |N(i)|``): the signature, options,
    parameters (``lin_l.weight``, ``lin_l.bias``, ``lin_r.weight``) and
    results of :class:`torch_geometric.nn.SAGEConv`. On a sampled batch the
    mean over the sampled neighbours is an unbiased estimate of the
    full-graph mean, so no degrees are needed (unlike :class:`GCNConv`).

    Args (PyG's):
        in_channels (int or tuple): size of each input sample, ``-1``
            (inferred at the first call), or a pair (sources, targets).
        out_channels (int): size of each output sample.
        aggr (str, optional): only ``"mean"``. (default: ``"mean"``)
        normalize (bool, optional): :math:`\ell_2`-normalize the output.
            (default: :obj:`False`)
        root_weight (bool, optional): add the transformed node itself.
            (default: :obj:`True`)
        project (bool, optional): only :obj:`False`.
        bias (bool, optional): learn an additive bias. (default: :obj:`True`)

    Other values (another ``aggr``, ``project=True``, other
    :class:`~torch_geometric.nn.conv.MessagePassing` arguments) raise
    :class:`NotImplementedError` naming the argument.

    ``forward(x, edge_index, size=None, *, num_dst=None)``: PyG's arguments
    (:obj:`x` a tensor or a pair ``(x_src, x_dst)``; :obj:`edge_index` a
    [2, E] tensor, PyG's ``EdgeIndex``, or a
    :class:`~dgcn.loader.NeighborLoader` batch's, read without a sort),
    and dgcn's :obj:`num_dst`: compute only the first rows (every edge must
    target one of them; see :func:`trim_to_layer`).
    """
    def __init__(self, in_channels: Union[int, Tuple[int, int]],
                 out_channels: int, aggr: Optional[str] = 'mean',
                 normalize: bool = False, root_weight: bool = True,
                 project: bool = False, bias: bool = True, **kwargs):
        super().__init__()
        if aggr != 'mean':
            raise NotImplementedError(
                f"SAGEConv: aggr={aggr!r} is not supported by dgcn's "
                f"SAGEConv (only aggr='mean', over dgcn's SpMM)")
        if project:
            raise NotImplementedError(
                "SAGEConv: project=True is not supported by dgcn's SAGEConv")
        for key, value in kwargs.items():
            if not (key == 'flow' and value == 'source_to_target'):
                raise NotImplementedError(
                    f"SAGEConv: {key}={value!r} is not supported by dgcn's "
                    f"SAGEConv (it averages messages source -> target)")
        check_channels('SAGEConv', in_channels, out_channels)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.aggr = aggr
        self.normalize = normalize
        self.root_weight = root_weight
        self.project = project
        pair = (in_channels if isinstance(in_channels, tuple) else
                (in_channels, in_channels))
        self.lin_l = linear(pair[0], out_channels, bias)
        if root_weight:
            self.lin_r = linear(pair[1], out_channels, False)
        self.reset_parameters()

    def reset_parameters(self):
        # torch's Linear initialization is PyG's Linear default (Kaiming
        # uniform weights, uniform bias bounded by 1 / sqrt(fan_in)).
        for lin in (self.lin_l, getattr(self, 'lin_r', None)):
            if lin is not None and not isinstance(
                    lin.weight, torch.nn.parameter.UninitializedParameter):
                lin.reset_parameters()

    def forward(self, x: Union[Tensor, Tuple[Tensor, Optional[Tensor]]],
                edge_index: Tensor, size: Optional[Tuple[int, int]] = None,
                *, num_dst: Optional[int] = None) -> Tensor:
        x_src, x_dst = x if isinstance(x, (tuple, list)) else (x, None)
        check_features('SAGEConv', x_src)
        if x_dst is not None:
            check_features('SAGEConv', x_dst, 'x_dst')
        check_edge_index('SAGEConv', edge_index)
        rows = num_rows('SAGEConv', x_src, x_dst, size, num_dst)
        # The root term: x_dst, else (x a tensor) the first rows of x.
        x_root = x_dst if isinstance(x, (tuple, list)) else x_src.narrow(
            0, 0, rows)
        materialize(self.lin_l, x_src)
        if self.root_weight and x_root is not None:
            materialize(self.lin_r, x_root)
        width = self.lin_l.weight.size(1)
        if x_src.size(1) != width:
            raise ValueError(f"SAGEConv: x has {x_src.size(1)} features; "
                             f"this layer takes in_channels = {width}")
        if x_root is not None and x_root.size(0) != rows:
            raise ValueError(f"SAGEConv: x_dst has {x_root.size(0)} rows "
                             f"for {rows} targets")
        rowptr, col = csr_by_target('SAGEConv', edge_index, x_src.size(0),
                                    rows)
        value = mean_weights(rowptr)
        col = col.int()
        # Aggregate then transform, or the reverse: whichever multiplies
        # fewer numbers (models/gcn.h, Note [Aggregation order]).
        if _C.aggregate_first(rows, x_src.size(0), col.numel(), width,
                              self.out_channels, self.training,
                              x_src.requires_grad):
            out = self.lin_l(torch.ops.dgcn.spmm(rowptr, col, value, x_src))
        else:
            out = torch.ops.dgcn.spmm(rowptr, col, value,
                                      F.linear(x_src, self.lin_l.weight))
            if self.lin_l.bias is not None:
                out = out + self.lin_l.bias
        if self.root_weight and x_root is not None:
            out = out + self.lin_r(x_root)
        if self.normalize:
            out = F.normalize(out, p=2., dim=-1)
        return out

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels}, aggr={self.aggr})')
