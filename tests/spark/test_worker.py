"""spark.worker.task: the worker's objects are frozen once, after its first task has run."""

from __future__ import annotations

import gc

from corpus_miner.spark import worker


def test_task_freezes_once_after_the_first_task_ends(monkeypatch):
    frozen = []
    monkeypatch.setattr(worker, "_settled", False)
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))

    seen = []

    @worker.task
    def doubled(batches):
        for batch in batches:
            seen.append(len(frozen))  # frozen yet, while the task runs?
            yield 2 * batch

    @worker.task
    def total(table):
        return sum(table)

    assert list(doubled([1, 2])) == [2, 4] and seen == [0, 0] and len(frozen) == 1
    assert total([1, 2, 3]) == 6 and list(doubled([3])) == [6] and len(frozen) == 1
    assert doubled.__name__ == "doubled" and total.__wrapped__.__name__ == "total"
