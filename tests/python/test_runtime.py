"""dgcn's process-wide choices (dgcn.enable_cpu_cache), each in a fresh
interpreter since they change the process."""
import subprocess
import sys

import pytest

import dgcn

_REUSE = '''
import torch, dgcn
assert not dgcn.cpu_cache_stats()['installed']
dgcn.enable_cpu_cache(1 << 30)
for _ in range(3):
    t = torch.ones(64 << 20, dtype=torch.uint8)  # above glibc's mmap limit
    del t
s = dgcn.cpu_cache_stats()
assert s['installed'] and s['large_allocations'] == 3, s
assert s['reused'] == 2, s
assert s['peak_mapped_bytes'] >= s['mapped_bytes'] >= 64 << 20, s
t = torch.ones(80 << 20, dtype=torch.uint8)  # no cached block fits: grows one
s = dgcn.cpu_cache_stats()
assert s['grown'] == 1 and s['mapped_bytes'] == 80 << 20, s
print('ok')
'''


def test_the_cpu_cache_reuses_freed_large_tensors():
    out = subprocess.run([sys.executable, '-c', _REUSE], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == 'ok'


def test_the_cpu_cache_refuses_a_cap_of_nothing():
    with pytest.raises(ValueError, match='max_bytes = 0'):
        dgcn.enable_cpu_cache(0)
