"""``scheduler/progress.py``: the running batch's steps, percentage and trace."""

from __future__ import annotations

from scheduler.progress import TOP_STEPS, Progress


def test_each_level_is_a_share_of_its_parent_step() -> None:
    progress = Progress()
    assert progress.view() == {"steps": [], "percentage": 0.0}
    with progress.step(TOP_STEPS, 0), progress.step(("a", "b", "c", "d"), 3):
        # step 3 of 4 under step 0 of 2: the reference's 37.5
        assert progress.view()["percentage"] == 37.5
        with progress.count("shard", 4) as shards:
            shards.done("shard 2", {"committing": 1_500})
            view = progress.view()
            assert view["steps"] == [
                {"currentStep": "processing tasks", "finished": 0, "total": 2},
                {"currentStep": "d", "finished": 3, "total": 4},
                {"currentStep": "shard", "finished": 1, "total": 4},
            ]
            assert view["percentage"] == 37.5 + 100 / 2 / 4 / 4
            running = progress.trace()
    assert list(running) == ["processing tasks > d > shard 2 > committing", "processing tasks > d > shard 2",
                             "processing tasks > d", "processing tasks"]
    assert running["processing tasks > d > shard 2 > committing"] == "1.50µs"
    with progress.step(TOP_STEPS, 1):
        pass
    assert list(progress.trace())[-1] == "writing tasks to disk"
    assert progress.view() == {"steps": [], "percentage": 0.0}
