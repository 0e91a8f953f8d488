"""GCN layers over dgcn's SpMM (``torch.ops.dgcn.spmm``, with autograd)."""
import math
from typing import Callable, List, Optional, Sequence, Tuple

import torch
from torch import Tensor

from . import _C

__all__ = ['GCNConv', 'gcn_norm', 'layerwise_inference', 'relu_dropout',
           'trim_to_layer']


def gcn_norm(edge_index: Tensor, num_nodes: int,
             deg: Optional[Tensor] = None, num_dst: Optional[int] = None):
    r"""The normalized adjacency :math:`\hat{A}` of :obj:`edge_index` as CSR
    tensors ``(rowptr, col, value)``, row ``i`` aggregating into node ``i``
    (``models/gcn_norm.h``).

    Without :obj:`deg`: self-loops and symmetric normalization by in-degree,
    as :func:`torch_geometric.nn.conv.gcn_conv.gcn_norm`. With :obj:`deg`
    (every node's degree in the full graph, e.g. a :class:`NeighborLoader`
    batch's ``deg``): dgcn's unbiased normalization of a sampled batch, each
    sampled row rescaled by ``deg / sampled``. With :obj:`num_dst`: only the
    rows of the first :obj:`num_dst` nodes, which every edge must target.
    """
    return torch.ops.dgcn.gcn_norm(edge_index, num_nodes, deg, num_dst)


def relu_dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    r"""``F.dropout(x.relu(), p, training)`` in one pass over :obj:`x`, the
    backward pass recomputing the mask instead of storing it (CPU; on other
    devices torch's own ops). The mask is drawn from torch's generator, so
    :func:`torch.manual_seed` makes it reproducible."""
    if not 0 <= p < 1:
        raise ValueError(f"relu_dropout: p = {p} is not in [0, 1)")
    return torch.ops.dgcn.relu_dropout(x, float(p), bool(training))


def trim_to_layer(
    layer: int,
    num_sampled_nodes: List[int],
    num_sampled_edges: List[int],
    edge_index: Tensor,
    deg: Optional[Tensor] = None,
) -> Tuple[Tensor, Optional[Tensor], int, int]:
    r"""What layer :obj:`layer` of a GCN with one layer per hop of a
    :class:`~dgcn.loader.NeighborLoader` batch reads and computes, as
    :func:`torch_geometric.utils.trim_to_layer` but also leaving out the rows
    no later layer reads: layer ``i`` of ``L`` reads the nodes of hops
    ``0..L-i`` and computes those of hops ``0..L-1-i`` (the seeds at the last
    layer), along the edges into them.

    Returns ``(edge_index, deg, num_src, num_dst)``: the edges and degrees
    to pass to :class:`GCNConv` with ``num_dst``, and the rows the layer's
    input has (``x.size(0)``) and its output will have. With :obj:`deg` the
    seeds' outputs equal those of the untrimmed batch.
    """
    num_layers = len(num_sampled_edges)
    if len(num_sampled_nodes) != num_layers + 1:
        raise ValueError(f"trim_to_layer: {len(num_sampled_nodes)} hops of "
                         f"nodes for {num_layers} hops of edges")
    if not 0 <= layer < num_layers:
        raise ValueError(f"trim_to_layer: layer = {layer} is not in "
                         f"[0, {num_layers})")
    num_src = sum(num_sampled_nodes[:num_layers + 1 - layer])
    num_dst = sum(num_sampled_nodes[:num_layers - layer])
    edge_index = edge_index.narrow(1, 0, sum(num_sampled_edges[:num_layers -
                                                               layer]))
    if deg is not None:
        deg = deg.narrow(0, 0, num_src)
    return edge_index, deg, num_src, num_dst


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

    ``forward(x, edge_index, deg=None, num_dst=None, n_id=None)``:
    :obj:`deg` selects the unbiased normalization of a sampled batch,
    :obj:`num_dst` computes only the first rows (:func:`gcn_norm`,
    :func:`trim_to_layer`). With :obj:`n_id`, :obj:`x` holds the features of
    every node of the graph (e.g. a store's ``x``, mapped, not copied) and
    the batch's node ``i`` is row ``n_id[i]``: the layer reads only the rows
    it needs, so a :class:`~dgcn.loader.NeighborLoader` with
    ``gather_features=False`` need not copy them into every batch.
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
                deg: Optional[Tensor] = None,
                num_dst: Optional[int] = None,
                n_id: Optional[Tensor] = None) -> Tensor:
        num_src = x.size(0) if n_id is None else n_id.numel()
        adj = self._cached_adj
        if adj is None:
            adj = gcn_norm(edge_index, num_src, deg, num_dst)
            if n_id is not None:  # columns: rows of x, the whole graph's
                rowptr, col, value = adj
                adj = rowptr, n_id.index_select(0, col.long()).int(), value
            if self.cached:
                self._cached_adj = adj
        rowptr, col, value = adj
        # With n_id, x is the whole graph's: only aggregating first reads
        # just the batch's rows of it.
        aggregate_first = n_id is not None or _C.aggregate_first(
            rowptr.numel() - 1, num_src, col.numel(), self.in_channels,
            self.out_channels, self.training, x.requires_grad)
        return self.propagate(adj, x, aggregate_first)

    def propagate(self, adj: Tuple[Tensor, Tensor, Tensor], x: Tensor,
                  aggregate_first: bool,
                  transformed: Optional[Tensor] = None) -> Tensor:
        r"""The layer's output for the normalized adjacency :obj:`adj`
        ``(rowptr, col, value)``: ``lin(A x)`` aggregating first, else
        ``A lin(x)`` (with :obj:`transformed` = ``lin(x)`` when computed
        once for several row chunks), plus the bias."""
        rowptr, col, value = adj
        if aggregate_first:
            out = self.lin(torch.ops.dgcn.spmm(rowptr, col, value, x))
        else:
            h = self.lin(x) if transformed is None else transformed
            out = torch.ops.dgcn.spmm(rowptr, col, value, h)
        if self.bias is not None:
            out = out + self.bias
        return out

    def __repr__(self) -> str:
        return (f'{self.__class__.__name__}({self.in_channels}, '
                f'{self.out_channels})')


@torch.no_grad()
def layerwise_inference(
    convs: Sequence[GCNConv],
    x: Tensor,
    store,
    act: Callable[[Tensor], Tensor] = torch.relu,
    chunk_rows: int = 1 << 16,
) -> Tensor:
    r"""Every node's output of the GCN :obj:`convs` (:obj:`act` between
    layers, no dropout) with every neighbour: exact, where sampled batches
    estimate. Layer by layer over the whole graph of :obj:`store` (a
    :class:`dgcn.data.Store`), :obj:`chunk_rows` rows of the normalized
    adjacency at a time (full degrees, self-loops: :func:`gcn_norm` on the
    whole graph), so memory holds two layers' outputs, never a k-hop
    subgraph per node (``models/inference.h``, which ``dgcn-train`` and
    ``dgcn-predict`` use). :obj:`x` is ``[num_nodes, in_channels]``, e.g.
    ``store.x``."""
    num_nodes = store.num_nodes
    if x.size(0) != num_nodes:
        raise ValueError(f"layerwise_inference: x has {x.size(0)} rows for "
                         f"{num_nodes} nodes")
    if chunk_rows < 1:
        raise ValueError(f"layerwise_inference: chunk_rows = {chunk_rows}; "
                         f"expected >= 1")
    for i, conv in enumerate(convs):
        # One order for the whole layer: transforming first multiplies
        # every row by the weights once, not once per chunk.
        aggregate_first = _C.aggregate_first(num_nodes, num_nodes,
                                             store.num_edges + num_nodes,
                                             conv.in_channels,
                                             conv.out_channels, False, False)
        h = None if aggregate_first else conv.lin(x)
        out = x.new_empty(num_nodes, conv.out_channels)
        for begin in range(0, num_nodes, chunk_rows):
            end = min(begin + chunk_rows, num_nodes)
            adj = tuple(t.to(x.device) for t in store.adjacency_rows(begin,
                                                                     end))
            out[begin:end] = conv.propagate(adj, x, aggregate_first, h)
        x = act(out) if i < len(convs) - 1 else out
    return x
