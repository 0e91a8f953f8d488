"""What torch needs of torch.ops.dgcn beyond its C++ kernels
(python/src/ops.cpp): a fake (Meta) kernel per op, giving the output's
shape, dtype and device without touching data, for torch.compile and
torch.library.opcheck; and the autograd formulas, written with the ops
themselves so that a compiled graph contains its backward pass."""
import torch

from . import _C  # noqa: F401  (registers the schemas and kernels)
from ._csr import target_of_entries


# dtype rule of the SpMMs: the result has the dense input's dtype (float32
# or bfloat16; value is float32 always, and every sum runs in float32).
@torch.library.register_fake('dgcn::spmm')
def _spmm_fake(rowptr, col, value, x):
    return x.new_empty(rowptr.size(0) - 1, x.size(1))


@torch.library.register_fake('dgcn::spmm_transposed')
def _spmm_transposed_fake(rowptr, col, value, dy, num_cols):
    return dy.new_empty(num_cols, dy.size(1))


@torch.library.register_fake('dgcn::relu_dropout')
def _relu_dropout_fake(x, p, training):
    return torch.empty_like(x)


@torch.library.register_fake('dgcn::relu_dropout_backward')
def _relu_dropout_backward_fake(y, dy, scale):
    torch._check(y.shape == dy.shape, lambda: "relu_dropout_backward: "
                 "y and dy differ in shape")
    return torch.empty_like(dy)


def _normalized_csr_fake(num_nodes, num_dst):
    # The entry count depends on the edges' values (self-loops are dropped
    # and one added per row): a size the data decides.
    nnz = torch.library.get_ctx().new_dynamic_size()
    rows = num_nodes if num_dst is None else num_dst
    cpu = torch.device('cpu')
    return (torch.empty(rows + 1, dtype=torch.long, device=cpu),
            torch.empty(nnz, dtype=torch.int32, device=cpu),
            torch.empty(nnz, dtype=torch.float32, device=cpu))


@torch.library.register_fake('dgcn::gcn_norm')
def _gcn_norm_fake(edge_index, num_nodes, deg=None, num_dst=None):
    return _normalized_csr_fake(num_nodes, num_dst)


@torch.library.register_fake('dgcn::gcn_norm_csc')
def _gcn_norm_csc_fake(colptr, row, num_nodes, deg=None, num_dst=None):
    return _normalized_csr_fake(num_nodes, num_dst)


def _spmm_setup(ctx, inputs, output):
    rowptr, col, value, x = inputs
    ctx.num_cols = x.size(0)
    ctx.save_for_backward(rowptr, col, value,
                          x if ctx.needs_input_grad[2] else None)


def _spmm_backward(ctx, dy):
    rowptr, col, value, x = ctx.saved_tensors
    dx = dvalue = None
    if ctx.needs_input_grad[3]:  # dx = Âᵀ · dy
        dx = torch.ops.dgcn.spmm_transposed(rowptr, col, value, dy,
                                            ctx.num_cols)
    if ctx.needs_input_grad[2]:  # d value[k] = <dy[row k], x[col k]>
        rows = target_of_entries(rowptr).to(dy.device)
        # Summed in value's float32, as the forward sums (bf16 dy and x).
        dvalue = (dy.index_select(0, rows).to(value.dtype) * x.index_select(
            0, col.long().to(x.device)).to(value.dtype)).sum(1)
        dvalue = dvalue.to(value.device)
    return None, None, dvalue, dx


torch.library.register_autograd('dgcn::spmm', _spmm_backward,
                                setup_context=_spmm_setup)


def _relu_dropout_setup(ctx, inputs, output):
    x, p, training = inputs
    ctx.scale = 1.0 / (1.0 - p) if training else 1.0
    ctx.save_for_backward(output)


def _relu_dropout_backward(ctx, dy):
    # The output is positive exactly where x was and the mask kept it.
    (y, ) = ctx.saved_tensors
    return torch.ops.dgcn.relu_dropout_backward(y, dy, ctx.scale), None, None


torch.library.register_autograd('dgcn::relu_dropout', _relu_dropout_backward,
                                setup_context=_relu_dropout_setup)


# GAT's multi-head weighted SpMM (python/src/gat_ops.cpp): out [rows, H*C],
# its gradients those of alpha [E, H] and x [N, H*C].
@torch.library.register_fake('dgcn::gat_spmm')
def _gat_spmm_fake(rowptr, col, alpha, x):
    return x.new_empty(rowptr.size(0) - 1, x.size(1))


@torch.library.register_fake('dgcn::gat_spmm_backward')
def _gat_spmm_backward_fake(rowptr, col, alpha, x, dout):
    return torch.empty_like(alpha), torch.empty_like(x)


def _gat_spmm_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _gat_spmm_backward(ctx, dout):
    rowptr, col, alpha, x = ctx.saved_tensors
    if not (ctx.needs_input_grad[2] or ctx.needs_input_grad[3]):
        return None, None, None, None
    dalpha, dx = torch.ops.dgcn.gat_spmm_backward(rowptr, col, alpha, x,
                                                  dout.contiguous())
    return (None, None, dalpha if ctx.needs_input_grad[2] else None,
            dx if ctx.needs_input_grad[3] else None)


torch.library.register_autograd('dgcn::gat_spmm', _gat_spmm_backward,
                                setup_context=_gat_spmm_setup)
