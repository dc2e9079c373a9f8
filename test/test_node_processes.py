"""A node process runs BLAS on one thread (set before numpy loads), unless the user's environment says otherwise."""
import json
import os
import subprocess
import sys

import pytest

# Runs start() with the node module replaced by one that reports what it finds when it is imported.
PROBE = """
import importlib, json, os, sys
from robot_dynamics_ros.nodes import start
class Node:
    @staticmethod
    def main():
        print(json.dumps({'numpy_loaded': 'numpy' in sys.modules,
                          'threads': [os.environ.get(v) for v in start.BLAS_THREADS]}))
        return 0
importlib.import_module = lambda name: Node
sys.exit(start.start('simulator'))
"""


@pytest.mark.parametrize('user_value', [None, '4'])
def test_node_processes_run_blas_on_one_thread_unless_told_otherwise(user_value):
    env = {k: v for k, v in os.environ.items() if k not in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS',
                                                             'MKL_NUM_THREADS')}
    if user_value:
        env['OPENBLAS_NUM_THREADS'] = user_value
    result = subprocess.run([sys.executable, '-c', PROBE], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert not seen['numpy_loaded']
    assert seen['threads'] == [user_value or '1', '1', '1']
