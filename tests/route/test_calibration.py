"""A fast slice of the calibration grid (``benchmarks/calibration.py`` runs all of it)."""

from __future__ import annotations

from whilecli.route.simulate import Truth, run_truth


def test_firm_verdicts_agree_with_the_truth_on_a_slice() -> None:
    truths = [
        Truth("floor", 8, 100),
        Truth("mid", 8, 200),
        Truth("apart", 4, 60),
        Truth("mid", 4, 100, teacher_gap=0.2),
        Truth("mid", 4, 100, teacher_gap=0.0),
        Truth("mid", 4, 40, 0.2, True),
    ]
    for i, truth in enumerate(truths):
        tally = run_truth(truth, 6, seed=i)
        assert tally.firm_wrong == 0, truth
    assert run_truth(Truth("floor", 8, 100), 3).firm == 3  # firm where evidence is plenty
