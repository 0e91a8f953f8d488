"""examples/gcn_ddp.py under torchrun: 2 ranks over Gloo on the CPU."""
import json
import os
import subprocess
import sys

from conftest import SOURCE_DIR


def test_gcn_ddp_two_ranks(cora_path, tmp_path):
    out = tmp_path / 'out'
    env = dict(os.environ, OMP_NUM_THREADS='1')
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc-per-node',
           '2', '--standalone', str(SOURCE_DIR / 'examples' /
                                          'gcn_ddp.py'),
           '--data', str(cora_path), '--epochs', '10', '--batch-size', '16',
           '--out', str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = [json.loads((out / f'rank-{r}.json').read_text())
               for r in range(2)]
    assert [r['rank'] for r in results] == [0, 1]
    # DDP kept the replicas equal, and every rank ran as many batches.
    assert results[0]['param_checksum'] == results[1]['param_checksum']
    assert results[0]['batches_per_epoch'] == results[1]['batches_per_epoch']
    assert results[0]['batches_per_epoch'] == 5  # 70 seeds per rank / 16
    assert results[0]['test_acc'] > 0.5
    # One training time per epoch (bench/python_epoch_bench.py reports the
    # first epoch, which pays the process's warm-up, apart).
    for r in results:
        assert len(r['epoch_s']) == 10 and min(r['epoch_s']) > 0
        assert abs(sum(r['epoch_s']) - r['train_s']) < 1e-9
        # The CPU cache is on by default (dgcn.enable_cpu_cache); the bench
        # compares its peak with dgcn-train's.
        assert isinstance(r['cpu_cache_peak_mapped_bytes'], int)
