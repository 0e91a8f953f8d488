"""``dgcn-train --model sage|gat``'s models as Python modules, and back.

A checkpoint (``docs/formats.md``) names its model in ``config['model']``
(``kind``, widths, ``heads``, dropouts) and holds the C++ model's tensors as
``model.conv1.lin_l.weight`` ... (``models/gnn_models.h``): the layers'
parameters have PyG's names and layouts already (``lin_l``/``lin_r``;
``lin``, ``att_src``, ``att_dst``, ``bias``), so a layer ``convN.`` of the
file is ``convs.{N-1}.`` here and loads unchanged, as into PyG's layers.
"""
import json
from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from ._gat import GATConv
from ._sage import SAGEConv

__all__ = ['GAT', 'GraphSAGE']


class _EngineModel(torch.nn.Module):
    r"""What :class:`GraphSAGE` and :class:`GAT` share: the record of a
    checkpoint's ``config['model']``, input features as training fed them,
    the C++ names of the parameters, the checkpoint file both ways."""
    kind = ''

    def _hidden_layer(self, i: int) -> bool:
        # Every layer but the output one is followed by the activation and
        # dropout; with a linear head the last layer is a hidden one too.
        return i < self.num_layers - 1 or self.head is not None

    def _activate(self, h: Tensor) -> Tensor:
        raise NotImplementedError

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        x = F.dropout(x, self.input_dropout, self.training)
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if self._hidden_layer(i):
                x = F.dropout(self._activate(x), self.dropout, self.training)
        return x if self.head is None else self.head(x)

    def input_features(self, x: Tensor) -> Tensor:
        r""":obj:`x` as training fed it (``GCN.input_features``)."""
        if not self.normalize_features:
            return x
        x = x.double() - x.min()
        return (x / x.sum(1, keepdim=True).clamp(min=1.0)).float()

    @torch.no_grad()
    def predict(self, store) -> Tensor:
        r"""Every node's logits over the whole graph of :obj:`store` with
        every neighbour, as ``dgcn-predict --nodes all --what logits``
        (one full-graph pass, in eval mode)."""
        from .data import to_pyg
        was_training = self.training
        self.eval()
        data = to_pyg(store)
        out = self(self.input_features(data.x), data.edge_index)
        self.train(was_training)
        return out

    def _record(self) -> dict:
        return {'kind': self.kind, 'in_features': self.in_channels,
                'hidden': self.hidden, 'num_classes': self.num_classes,
                'layers': self.num_layers,
                'head': 'none' if self.head is None else 'linear',
                'dropout': self.dropout, 'input_dropout': self.input_dropout,
                'normalize_features': self.normalize_features}

    @classmethod
    def _from_record(cls, m: dict):
        raise NotImplementedError

    @classmethod
    def from_checkpoint(cls, path: str):
        r"""The model of a ``dgcn-train --model {sage,gat}`` checkpoint file
        in eval mode; its run's record is :obj:`config` (a dict)."""
        from .checkpoint import _FORMAT
        d = torch.load(path, map_location='cpu', weights_only=True)
        if not isinstance(d, dict) or 'config' not in d or 'format' not in d:
            raise ValueError(f"load_checkpoint: {path} is not a dgcn "
                             f"checkpoint (no 'format' and 'config')")
        if int(d['format']) != _FORMAT:
            raise ValueError(f"load_checkpoint: {path} has format "
                             f"{int(d['format'])}; this dgcn reads {_FORMAT}")
        config = json.loads(d['config'])
        m = config.get('model', {})
        if m.get('kind') != cls.kind:
            raise ValueError(f"load_checkpoint: {path} holds a "
                             f"{m.get('kind')!r} model, not a {cls.kind!r} one")
        model = cls._from_record(m)
        state = {}
        for key, value in d.items():
            if not key.startswith('model.'):
                continue
            key = key[len('model.'):]
            if key.startswith('conv'):  # convN.rest -> convs.{N-1}.rest
                layer, rest = key[len('conv'):].split('.', 1)
                key = f'convs.{int(layer) - 1}.{rest}'
            state[key] = value
        missing, unexpected = model.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise ValueError(f"load_checkpoint: {path}'s tensors do not fit "
                             f"a {cls.kind} model of its record (missing "
                             f"{sorted(missing)}, unexpected "
                             f"{sorted(unexpected)})")
        model.config = config
        return model.eval()

    def save_checkpoint(self, path: str, store=None, epoch: int = 0,
                        seed: int = 0) -> None:
        r"""Writes the model as a ``dgcn-train`` checkpoint that
        ``dgcn-predict`` evaluates (``GCN.save_checkpoint``: no optimizer
        state, so ``--resume`` refuses it)."""
        from .checkpoint import _FORMAT
        data = {'digest': '', 'path': ''}
        if store is not None:
            data = {'digest': store.content_digest(0),
                    'num_nodes': store.num_nodes, 'path': ''}
        config = {'model': self._record(), 'data': data,
                  'writer': f'dgcn.nn.{type(self).__name__}'}
        out = {'format': torch.tensor(_FORMAT), 'epoch': torch.tensor(epoch),
               'batch': torch.tensor(0), 'seed': torch.tensor(seed),
               'world_size': torch.tensor(1), 'config': json.dumps(config)}
        for key, value in self.state_dict().items():
            if key.startswith('convs.'):
                layer, rest = key[len('convs.'):].split('.', 1)
                key = f'conv{int(layer) + 1}.{rest}'
            out['model.' + key] = value.detach().cpu().contiguous()
        torch.save(out, path)


def _check_head(model: str, head: str, num_layers) -> None:
    """The checks every engine model (GCN, GraphSAGE, GAT) makes of its
    ``head`` and ``num_layers``; ``model`` names it in the error."""
    if head not in ('none', 'linear'):
        raise ValueError(f"{model}: head = {head!r}; expected 'none' or "
                         f"'linear'")
    if not isinstance(num_layers, int) or num_layers < 1:
        raise ValueError(f"{model}: num_layers = {num_layers!r}; expected "
                         f"an integer >= 1")


class GraphSAGE(_EngineModel):
    r"""``dgcn-train --model sage``'s model (``models/gnn_models.h``):
    :obj:`num_layers` :class:`SAGEConv` layers (mean, root weight), ReLU and
    dropout between them, and with ``head='linear'`` every layer
    :obj:`hidden` wide, then ReLU, dropout and a :class:`torch.nn.Linear`
    to the classes. ``forward(x, edge_index)`` is the full-graph call;
    :meth:`from_checkpoint` reads a checkpoint, :meth:`save_checkpoint`
    writes one."""
    kind = 'sage'

    def __init__(self, in_channels: int, hidden: int, num_classes: int,
                 num_layers: int = 2, head: str = 'none',
                 dropout: float = 0.5, input_dropout: float = 0.0,
                 normalize_features: bool = False):
        super().__init__()
        _check_head('GraphSAGE', head, num_layers)
        widths = [in_channels] + [hidden] * (num_layers - 1)
        widths.append(hidden if head == 'linear' else num_classes)
        self.convs = torch.nn.ModuleList(
            SAGEConv(a, b) for a, b in zip(widths, widths[1:]))
        self.head = (torch.nn.Linear(hidden, num_classes)
                     if head == 'linear' else None)
        self.in_channels, self.hidden = in_channels, hidden
        self.num_classes, self.num_layers = num_classes, num_layers
        self.dropout, self.input_dropout = dropout, input_dropout
        self.normalize_features = normalize_features

    def _activate(self, h: Tensor) -> Tensor:
        return h.relu()

    @classmethod
    def _from_record(cls, m: dict):
        return cls(m['in_features'], m['hidden'], m['num_classes'],
                   m['layers'], m['head'], m['dropout'], m['input_dropout'],
                   m.get('normalize_features', False))


class GAT(_EngineModel):
    r"""``dgcn-train --model gat``'s model (``models/gnn_models.h``, PyG's
    GAT example and Veličković et al.): hidden :class:`GATConv` layers of
    :obj:`heads` heads of :obj:`hidden` features, concatenated, ELU and
    dropout between layers, attention dropout :obj:`attention_dropout`;
    the output layer one head of the classes (mean), or with
    ``head='linear'`` a hidden layer too and a :class:`torch.nn.Linear` to
    the classes. ``GAT(in, 8, classes, heads=8)`` is the paper's Cora
    setup (``--model gat --heads 8 --hidden 8``)."""
    kind = 'gat'

    def __init__(self, in_channels: int, hidden: int, num_classes: int,
                 num_layers: int = 2, heads: int = 1, head: str = 'none',
                 dropout: float = 0.5, input_dropout: float = 0.0,
                 attention_dropout: float = 0.0,
                 normalize_features: bool = False):
        super().__init__()
        _check_head('GAT', head, num_layers)
        self.head = None  # (_hidden_layer reads it while building)
        self.num_layers = num_layers
        if head == 'linear':
            self.head = torch.nn.Linear(hidden * heads, num_classes)
        convs, width = [], in_channels
        for i in range(num_layers):
            if self._hidden_layer(i):
                convs.append(GATConv(width, hidden, heads=heads, concat=True,
                                     dropout=attention_dropout))
                width = hidden * heads
            else:
                convs.append(GATConv(width, num_classes, heads=1,
                                     concat=False, dropout=attention_dropout))
        self.convs = torch.nn.ModuleList(convs)
        self.in_channels, self.hidden = in_channels, hidden
        self.num_classes, self.heads = num_classes, heads
        self.dropout, self.input_dropout = dropout, input_dropout
        self.attention_dropout = attention_dropout
        self.normalize_features = normalize_features

    def _activate(self, h: Tensor) -> Tensor:
        return F.elu(h)

    def _record(self) -> dict:
        m = super()._record()
        m.update(heads=self.heads, attention_dropout=self.attention_dropout)
        return m

    @classmethod
    def _from_record(cls, m: dict):
        return cls(m['in_features'], m['hidden'], m['num_classes'],
                   m['layers'], m['heads'], m['head'], m['dropout'],
                   m['input_dropout'], m['attention_dropout'],
                   m.get('normalize_features', False))


def model_class(kind: Optional[str]):
    r"""The Python class of a checkpoint's ``model.kind`` other than GCN."""
    return {'sage': GraphSAGE, 'gat': GAT}.get(kind)
