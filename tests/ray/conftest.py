"""One local Ray cluster (2 CPUs) for all Ray tests: starting one costs seconds, and its worker
processes compile the kernels once. Without the `ray` extra the tests are skipped."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield ray
    ray.shutdown()
