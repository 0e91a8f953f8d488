"""The model of a ``dgcn-train`` checkpoint as a Python module, and back.

A checkpoint (``docs/formats.md``, ``train/checkpoint.h``) is a dict that
``torch.load`` reads: ``config`` (the run's JSON record) and the C++ model's
tensors as ``model.conv1.weight`` (``[in, out]``: the C++ layer multiplies
``x @ weight``), ``model.conv1.bias``, ... and, with ``--head linear``,
``model.head.weight`` (``[out, in]``, torch's Linear). :class:`GCN` holds
the same model with PyG's names and layouts (``convs.0.lin.weight`` as
``[out, in]``, as :class:`torch_geometric.nn.models.GCN`).
"""
import json

import torch
from torch import Tensor

from ._gnn_checkpoint import _check_head
from .nn import GCNConv, layerwise_inference

__all__ = ['GCN', 'load_checkpoint', 'save_checkpoint']

_FORMAT = 2  # train/checkpoint.cpp's kFormat, the one dgcn-predict reads


class GCN(torch.nn.Module):
    r"""``dgcn-train``'s GCN (``models/gcn.h``): :obj:`num_layers`
    :class:`~dgcn.nn.GCNConv` layers, ReLU and dropout between them, and
    with ``head='linear'`` every layer :obj:`hidden` wide, then ReLU,
    dropout and a :class:`torch.nn.Linear` to the classes.
    :obj:`normalize_features` records that training fed PyG's
    ``NormalizeFeatures`` of the store's features (:meth:`input_features`).

    ``forward(x, edge_index)`` is PyG's full-graph call; :meth:`predict`
    computes what ``dgcn-predict --what logits`` writes for a store.
    """
    def __init__(self, in_channels: int, hidden: int, num_classes: int,
                 num_layers: int = 2, head: str = 'none',
                 dropout: float = 0.5, input_dropout: float = 0.0,
                 normalize_features: bool = False):
        super().__init__()
        _check_head('GCN', head, num_layers)
        widths = [in_channels] + [hidden] * (num_layers - 1)
        widths.append(hidden if head == 'linear' else num_classes)
        self.convs = torch.nn.ModuleList(
            GCNConv(a, b) for a, b in zip(widths, widths[1:]))
        self.head = (torch.nn.Linear(hidden, num_classes)
                     if head == 'linear' else None)
        self.in_channels, self.hidden = in_channels, hidden
        self.num_classes, self.num_layers = num_classes, num_layers
        self.dropout, self.input_dropout = dropout, input_dropout
        self.normalize_features = normalize_features

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        x = torch.nn.functional.dropout(x, self.input_dropout, self.training)
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < self.num_layers - 1 or self.head is not None:
                x = torch.nn.functional.dropout(x.relu(), self.dropout,
                                                self.training)
        return x if self.head is None else self.head(x)

    def input_features(self, x: Tensor) -> Tensor:
        r""":obj:`x` as training fed it: with :obj:`normalize_features`,
        shifted by its smallest value and each row divided by its sum (at
        least 1; ``train/features.h``, PyG's ``NormalizeFeatures``)."""
        if not self.normalize_features:
            return x
        x = x.double() - x.min()
        return (x / x.sum(1, keepdim=True).clamp(min=1.0)).float()

    @torch.no_grad()
    def predict(self, store, chunk_rows: int = 1 << 16) -> Tensor:
        r"""Every node's logits over the whole graph of :obj:`store`, as
        ``dgcn-predict --nodes all --what logits`` (layer-wise, every
        neighbour, no dropout)."""
        was_training = self.training
        self.eval()
        h = layerwise_inference(list(self.convs),
                                self.input_features(store.x), store,
                                chunk_rows=chunk_rows)
        self.train(was_training)
        return h if self.head is None else self.head(h.relu())

    @classmethod
    def from_checkpoint(cls, path: str) -> 'GCN':
        r"""The model of a ``dgcn-train`` checkpoint file (e.g.
        ``ckpt/best.pt``), in eval mode; its run's record is
        :obj:`config` (a dict)."""
        d = torch.load(path, map_location='cpu', weights_only=True)
        if not isinstance(d, dict) or 'config' not in d or 'format' not in d:
            raise ValueError(f"load_checkpoint: {path} is not a dgcn "
                             f"checkpoint (no 'format' and 'config')")
        if int(d['format']) != _FORMAT:
            raise ValueError(f"load_checkpoint: {path} has format "
                             f"{int(d['format'])}; this dgcn reads {_FORMAT}")
        config = json.loads(d['config'])
        m = config.get('model', {})
        if m.get('kind') != 'gcn':
            raise ValueError(f"load_checkpoint: {path} holds a "
                             f"{m.get('kind')!r} model, not a GCN")
        model = cls(m['in_features'], m['hidden'], m['num_classes'],
                    m['layers'], m['head'], m['dropout'], m['input_dropout'],
                    m['normalize_features'])
        state = {k[len('model.'):]: v for k, v in d.items()
                 if k.startswith('model.')}
        model.load_state_dict(_from_cpp_names(state, model.num_layers))
        model.config = config
        return model.eval()

    def save_checkpoint(self, path: str, store=None, epoch: int = 0,
                        seed: int = 0) -> None:
        r"""Writes the model as a ``dgcn-train`` checkpoint that
        ``dgcn-predict --checkpoint path`` evaluates. :obj:`store` (the one
        trained on) records its digest, which ``dgcn-predict`` compares
        with the store it is given (a warning when they differ). The file
        holds no optimizer state, so ``dgcn-train --resume`` refuses it
        (Adam's C++ archive is not something Python writes)."""
        m = {'kind': 'gcn', 'in_features': self.in_channels,
             'hidden': self.hidden, 'num_classes': self.num_classes,
             'layers': self.num_layers,
             'head': 'none' if self.head is None else 'linear',
             'dropout': self.dropout, 'input_dropout': self.input_dropout,
             'normalize_features': self.normalize_features}
        data = {'digest': '', 'path': ''}
        if store is not None:
            data = {'digest': store.content_digest(0),
                    'num_nodes': store.num_nodes, 'path': ''}
        config = {'model': m, 'data': data, 'writer': 'dgcn.nn.GCN'}
        out = {'format': torch.tensor(_FORMAT), 'epoch': torch.tensor(epoch),
               'batch': torch.tensor(0), 'seed': torch.tensor(seed),
               'world_size': torch.tensor(1), 'config': json.dumps(config)}
        for k, v in _to_cpp_names(self.state_dict(), self.num_layers).items():
            out['model.' + k] = v.detach().cpu().contiguous()
        torch.save(out, path)


def _from_cpp_names(state, num_layers):
    out = {}
    for i in range(num_layers):
        # The C++ layer's weight multiplies from the right: [in, out].
        out[f'convs.{i}.lin.weight'] = state.pop(f'conv{i + 1}.weight').t()
        out[f'convs.{i}.bias'] = state.pop(f'conv{i + 1}.bias')
    for k in ('head.weight', 'head.bias'):
        if k in state:
            out[k] = state.pop(k)
    if state:
        raise ValueError(f"load_checkpoint: tensors {sorted(state)} match "
                         f"nothing in the GCN (another architecture?)")
    return out


def _to_cpp_names(state, num_layers):
    out = {}
    for i in range(num_layers):
        out[f'conv{i + 1}.weight'] = state[f'convs.{i}.lin.weight'].t()
        out[f'conv{i + 1}.bias'] = state[f'convs.{i}.bias']
    for k in ('head.weight', 'head.bias'):
        if k in state:
            out[k] = state[k]
    return out


def load_checkpoint(path: str):
    r"""The model of a ``dgcn-train`` checkpoint, by the kind it records:
    :meth:`GCN.from_checkpoint`, or for ``--model sage`` / ``gat``
    :class:`~dgcn.nn.GraphSAGE` / :class:`~dgcn.nn.GAT`'s."""
    from ._gnn_checkpoint import model_class
    d = torch.load(path, map_location='cpu', weights_only=True)
    kind = None
    if isinstance(d, dict) and 'config' in d:
        kind = json.loads(d['config']).get('model', {}).get('kind')
    return (model_class(kind) or GCN).from_checkpoint(path)


def save_checkpoint(model, path: str, store=None, epoch: int = 0,
                    seed: int = 0) -> None:
    r"""The model's ``save_checkpoint`` (:class:`GCN`,
    :class:`~dgcn.nn.GraphSAGE` or :class:`~dgcn.nn.GAT`)."""
    model.save_checkpoint(path, store, epoch, seed)
