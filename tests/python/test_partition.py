"""dgcn.data.open_partition + NeighborLoader on a partitioned graph, two
ranks under torchrun: every batch equals the whole store's."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dgcn
from conftest import _prep_binary


def test_partitioned_batches_equal_the_whole_graphs(cora_path, tmp_path):
    parts = tmp_path / 'parts'
    subprocess.run([_prep_binary(), 'partition', str(cora_path), '--parts',
                    '2', '--out', str(parts), '--threads', '1'], check=True,
                   capture_output=True)
    out = tmp_path / 'out'
    out.mkdir()
    worker = Path(__file__).with_name('partition_worker.py')
    env = dict(os.environ, OMP_NUM_THREADS='1')
    proc = subprocess.run(
        [sys.executable, '-m', 'torch.distributed.run', '--standalone',
         '--nproc-per-node', '2', str(worker), str(cora_path), str(parts),
         str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = [json.loads((out / f'rank-{r}.json').read_text())
               for r in range(2)]
    for r in results:
        assert r['batches'] == r['len'] > 0  # every batch compared
        assert r['num_nodes'] == 2708
        assert r['part_nodes'] < 2708  # each rank holds only its part


def test_open_partition_needs_torch_distributed(tmp_path):
    with pytest.raises(RuntimeError, match='init_process_group'):
        dgcn.data.open_partition(tmp_path)
