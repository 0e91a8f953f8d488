"""examples/gcn_ddp.py under torchrun: 2 ranks over Gloo on the CPU."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

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
        # Each epoch's end in Unix seconds, at least its length after the
        # previous one's (the bench's --side-by-side lines the two up).
        ends = r['epoch_end_time']
        assert len(ends) == 10
        assert all(b - a >= s - 1e-3 for a, b, s in
                   zip(ends, ends[1:], r['epoch_s'][1:]))
        # What each epoch used, every thread: some work, no more than
        # every CPU busy all epoch long, the kernel's share a part of it.
        cpu = r['epoch_cpu_s']
        assert len(cpu) == 10
        assert all(0 < c <= s * os.cpu_count() + 0.01
                   for c, s in zip(cpu, r['epoch_s']))
        assert all(0 <= s <= c for s, c in zip(r['epoch_system_s'], cpu))
        assert all(isinstance(f, int) and f >= 0
                   for f in r['epoch_minor_faults'])
        # The CPU cache is on by default (dgcn.enable_cpu_cache); the bench
        # compares its peak with dgcn-train's.
        assert isinstance(r['cpu_cache_peak_mapped_bytes'], int)


def import_bench():
    sys.path.insert(0, str(SOURCE_DIR / 'bench'))
    try:
        import python_epoch_bench
    finally:
        sys.path.pop(0)
    return python_epoch_bench


def test_bench_ratios_pair_the_runs_of_one_repeat():
    # bench/python_epoch_bench.py divides each repeat's Python run by the
    # dgcn-train run beside it, over the epochs asked for.
    bench = import_bench()
    runs = {'python': [[0.8, 0.4, 0.2], [0.9, 0.6, 0.6]],
            'dgcn_train': [[0.4, 0.3, 0.3], [1.2, 0.5, 0.5]]}
    first = bench.compare(runs, slice(0, 1))
    assert first['python_over_dgcn_train_by_repeat'] == pytest.approx(
        [2.0, 0.75])
    assert first['median_of_repeat_ratios'] == pytest.approx(1.375)
    assert first['python_over_dgcn_train'] == pytest.approx(0.85 / 0.8)
    later = bench.compare(runs, slice(1, None))
    assert later['python_over_dgcn_train_by_repeat'] == pytest.approx(
        [1.0, 1.2])


def test_bench_usage_is_per_batch_with_medians_by_side():
    # The bench divides what each run used by its batches, compares the CPU
    # seconds as it does the wall seconds, and gives the kernel seconds and
    # faults per batch as medians over the runs, side by side.
    bench = import_bench()
    out = {'epoch_cpu_s': [4.0, 3.0], 'epoch_system_s': [2.0, 0.5],
           'epoch_minor_faults': [100, 10]}
    runs = [bench.example_usage(out),
            bench.dgcn_train_usage([{'cpu_s': 8.0, 'system_s': 4.0,
                                     'minor_faults': 300, 'epoch_s': 9.0},
                                    {'cpu_s': 2.0, 'system_s': 0.1,
                                     'minor_faults': 20, 'epoch_s': 2.5}]),
            bench.example_usage({'epoch_cpu_s': [6.0, 2.0],
                                 'epoch_system_s': [1.0, 0.2],
                                 'epoch_minor_faults': [50, 4]})]
    usage_runs = {'python': [bench.per_batch(r, 2) for r in runs],
                  'dgcn_train': [bench.per_batch(runs[0], 1)]}
    assert bench.usage_of(usage_runs, 'cpu_s')['python'] == [
        [2.0, 1.5], [4.0, 1.0], [3.0, 1.0]]
    first = bench.usage_medians(usage_runs, slice(0, 1))
    assert first['python'] == {'system_s_per_batch': 1.0,
                               'minor_faults_per_batch': 50.0}
    assert first['dgcn_train'] == {'system_s_per_batch': 2.0,
                                   'minor_faults_per_batch': 100.0}
    later = bench.usage_medians(usage_runs, slice(1, None))
    assert later['python']['minor_faults_per_batch'] == 5.0


def test_side_by_side_overlap_is_the_share_run_beside_the_other():
    # --side-by-side reports which share of one side's compared epochs the
    # other side spent training; an epoch before the other's first or after
    # its last counts only its part inside.
    bench = import_bench()
    other = [(10.0, 20.0), (20.0, 30.0)]
    assert bench.overlap([(12.0, 18.0), (18.0, 28.0)], other) == 1.0
    assert bench.overlap([(5.0, 15.0)], other) == pytest.approx(0.5)
    assert bench.overlap([(25.0, 35.0), (35.0, 45.0)], other) == \
        pytest.approx(0.25)


def test_start_gate_holds_the_first_epoch_until_the_bench_opens_it(
        cora_path, tmp_path):
    # --start-gate (bench/python_epoch_bench.py --side-by-side): the example
    # announces itself once built and starts its first epoch only after the
    # bench has opened the gate.
    bench = import_bench()
    gate = str(tmp_path / 'go')
    env = dict(os.environ, OMP_NUM_THREADS='1')
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc-per-node',
           '1', '--standalone', str(SOURCE_DIR / 'examples' / 'gcn_ddp.py'),
           '--data', str(cora_path), '--epochs', '1', '--batch-size', '16',
           '--no-eval', '--start-gate', gate]
    started = {'python': bench.start_pinned(
        cmd, env, sorted(os.sched_getaffinity(0)), str(tmp_path), 'example')}
    opened = bench.open_start_gate(gate, 1, started)
    result = bench.finish(started['python'], cmd)
    # It announced itself (the gate opened on its count) and tidied up.
    assert not [f for f in os.listdir(tmp_path) if f.startswith('go.ready.')]
    first_start = result['epoch_end_time'][0] - result['epoch_s'][0]
    assert first_start >= opened


def test_a_side_that_exits_before_the_gate_stops_the_other(tmp_path):
    # One side exits before its first epoch: the bench says which, opens no
    # gate, and kills the other side with all its processes, also one in a
    # session of its own (as torchrun starts its ranks), which would
    # otherwise wait at the gate.
    bench = import_bench()
    cpus = sorted(os.sched_getaffinity(0))
    waiting = [sys.executable, '-c', 'import subprocess, sys, time; '
               'rank = subprocess.Popen([sys.executable, "-c", '
               '"import time; time.sleep(120)"], start_new_session=True); '
               'print(rank.pid, flush=True); time.sleep(120)']
    started = {}
    with pytest.raises(SystemExit, match='python exited before its first'):
        with bench.stopped_on_error(started):
            started['dgcn_train'] = bench.start_pinned(
                waiting, dict(os.environ), cpus, str(tmp_path), 'waiting')
            out = tmp_path / 'waiting.out'
            for _ in range(1000):  # its rank has started
                if out.read_text().strip():
                    break
                time.sleep(0.01)
            rank = int(out.read_text())
            started['python'] = bench.start_pinned(
                [sys.executable, '-c', 'print("{}")'], dict(os.environ),
                cpus, str(tmp_path), 'exits')
            bench.open_start_gate(str(tmp_path / 'go'), 2, started)
    assert not (tmp_path / 'go').exists()
    assert started['dgcn_train'][0].returncode == -9
    for _ in range(1000):  # the rank too, once init has reaped it
        try:
            os.kill(rank, 0)
        except ProcessLookupError:
            break
        time.sleep(0.01)
    else:
        os.kill(rank, signal.SIGKILL)
        pytest.fail('a process of the waiting side outlived the bench')
