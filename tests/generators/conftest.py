"""One torch CPU thread for the generator tests: their networks are tiny, and on a busy
2-core machine torch's default thread pool makes each small op ~10× slower (measured)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
