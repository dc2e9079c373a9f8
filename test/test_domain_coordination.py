"""The DDS tests' ROS domains: each claimed by binding a port as launch_testing's domain_coordinator does, so
that concurrent test runs never share one, from the range the environment gives."""
import socket
import subprocess
import sys

import ros_helpers
from conftest import TEST_DIR

# A second pytest run: a process that claims a domain from the same range and prints it.
OTHER_RUN = """
import sys
sys.path.insert(0, sys.argv[1])
import ros_helpers
print(ros_helpers.domain_id('other run'))
"""


def test_a_domain_taken_elsewhere_is_skipped_and_freed_when_released(monkeypatch):
    monkeypatch.setenv(ros_helpers.DOMAINS_VARIABLE, '150-152')
    taken = []
    for domain in (150, 151):   # as another run's coordinator holds them
        taken.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        taken[-1].bind(('', ros_helpers.COORDINATION_PORT_BASE + domain))
    try:
        assert ros_helpers.domain_id('first') == 152
        other = subprocess.run([sys.executable, '-c', OTHER_RUN, TEST_DIR], capture_output=True, text=True,
                               timeout=60)   # inherits the range
        assert other.returncode != 0 and 'every ROS domain in range(150, 153) is taken' in other.stderr
        ros_helpers.release_domain('first')
        taken.pop().close()
        assert ros_helpers.domain_id('second') in (151, 152)
        ros_helpers.release_domain('second')
    finally:
        for claim in taken:
            claim.close()


def test_two_keys_of_one_run_get_different_domains(monkeypatch):
    monkeypatch.setenv(ros_helpers.DOMAINS_VARIABLE, '160-161')
    try:
        assert {ros_helpers.domain_id('a'), ros_helpers.domain_id('b')} == {160, 161}
        assert ros_helpers.domain_id('a') == ros_helpers.domain_id('a')
    finally:
        ros_helpers.release_domain('a')
        ros_helpers.release_domain('b')
