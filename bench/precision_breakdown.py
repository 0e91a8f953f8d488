"""Where a products batch's training step goes, fp32 against bf16 (issue 32):
the dense products (forward, weight and input gradients of every layer, as
the GCN computes them aggregating first), the SpMM (dgcn-spmm-bench's
products-like block: forward of the first layer, which reads the store's
rows and so is also the input gather, and the transposed backward of a
hidden layer), the ReLU/dropout passes over the activations, and the Adam step; each
timed fp32 and bf16 back to back in every repetition, best of --reps.
One JSON object.

    python bench/precision_breakdown.py --threads 2
"""
import argparse
import json
import os
import subprocess
import time

import torch


def best(fn, reps):
    out = float('inf')
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--reps', type=int, default=5)
    p.add_argument('--bin', default='build/bin')
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    spmm = json.loads(subprocess.run([os.path.join(args.bin, 'dgcn-spmm-bench'), '--threads', str(args.threads),
                                      '--reps', str(args.reps)], capture_output=True, text=True,
                                     check=True).stdout)
    blocks = spmm['train_step']['blocks_dst_src_nnz']  # [num_dst, num_src, nnz] per layer, forward order
    widths = [100, 128, 128, 128]  # products: 100 features, hidden 128, linear head to 47 classes
    classes = 47
    torch.manual_seed(0)
    out = {'threads': args.threads, 'reps': args.reps, 'blocks': blocks, 'fp32': {}, 'bf16': {}}
    for name, dtype in (('fp32', torch.float32), ('bf16', torch.bfloat16)):
        dense = 0.0
        for l, (dst, _, _) in enumerate(blocks):
            z = torch.randn(dst, widths[l]).to(dtype)
            w = torch.randn(widths[l], widths[l + 1]).to(dtype)
            dy = torch.randn(dst, widths[l + 1]).to(dtype)
            dense += best(lambda: torch.mm(z, w), args.reps)  # forward
            dense += best(lambda: torch.mm(z.t(), dy), args.reps)  # weight gradient
            if l > 0:
                dense += best(lambda: torch.mm(dy, w.t()), args.reps)  # gradient of the layer's input
        h = torch.randn(blocks[-1][0], widths[-1]).to(dtype)
        hw = torch.randn(widths[-1], classes).to(dtype)
        dense += 3 * best(lambda: torch.mm(h, hw), args.reps)  # head forward and both gradients
        # ReLU + dropout after each hidden layer, forward and backward: an elementwise pass over the
        # activation in its dtype (dgcn's fused kernel reads and writes it once, as relu does here).
        act = 0.0
        for dst, _, _ in blocks[:-1]:
            a = torch.randn(dst, widths[1]).to(dtype)
            act += 2 * best(lambda: torch.relu(a), args.reps)
        out[name]['dense_ms'] = dense
        out[name]['activation_ms'] = act
    out['fp32']['spmm_first_layer_forward_ms'] = spmm['forward']['ms']
    out['bf16']['spmm_first_layer_forward_ms'] = spmm['forward_bf16']['ms']
    out['fp32']['spmm_hidden_backward_ms'] = spmm['backward']['transposed_spmm_ms']
    out['bf16']['spmm_hidden_backward_ms'] = spmm['forward_bf16'].get('transposed_spmm_ms')
    params = [torch.randn(100, 128, requires_grad=True), torch.randn(128, 128, requires_grad=True),
              torch.randn(128, 128, requires_grad=True), torch.randn(128, 47, requires_grad=True)]
    for q in params:
        q.grad = torch.randn_like(q)
    adam = torch.optim.Adam(params, lr=0.01)
    adam_ms = best(adam.step, args.reps)
    for name in ('fp32', 'bf16'):
        out[name]['optimizer_ms'] = adam_ms  # fp32 master weights and state either way
    out['spmm_bench_train_step_ms'] = spmm['train_step']
    print(json.dumps(out))


if __name__ == '__main__':
    main()
