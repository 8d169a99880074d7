"""VLMEvalKit result tables (vlmeval/dataset/image_mcq.py, utils/multiple_choice.py):
outputs/<model>/<eval id>/<model>_<dataset>_<judge>_result.tsv with index, prediction and hit;
the _acc.csv beside it is refused as the summary it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from whilecli.errors import InputError
from whilecli.io.read import read_rows

MODEL = "Qwen2-VL-7B-Instruct"
HITS = [1, 1, 0, 1, 0, 1, 1, 0]
HEADER = ["index", "question", "A", "B", "answer", "category", "prediction", "hit", "log"]


def _write(root: Path, separator: str = "\t", hit_text: bool = False) -> Path:
    folder = root / "outputs" / MODEL / "T20250110_G1a2b3c"
    folder.mkdir(parents=True)
    lines = [separator.join(HEADER)]
    for i, hit in enumerate(HITS):
        shown = str(bool(hit)) if hit_text else str(hit)
        cells = [str(i), f"What is in picture {i}?", "cat", "dog", "A", "attribute"]
        lines.append(separator.join([*cells, "A" if hit else "B", shown, "Match"]))
    suffix = "tsv" if separator == "\t" else "csv"
    path = folder / f"{MODEL}_AI2D_TEST_exact_matching_result.{suffix}"
    path.write_text("\n".join(lines) + "\n")
    (folder / f"{MODEL}_AI2D_TEST_acc.csv").write_text(
        "split,Overall,attribute\nnone,0.625,0.625\n"
    )
    return path


@pytest.mark.parametrize(("separator", "hit_text"), [("\t", False), (",", False), (",", True)])
def test_result_table_reads_one_reply_per_item(
    tmp_path: Path, separator: str, hit_text: bool
) -> None:
    rows = read_rows([str(_write(tmp_path, separator, hit_text))])
    frame = rows.frame.collect()
    assert frame["task_id"].n_unique() == len(HITS) == frame.height
    assert frame["passed"].sum() == sum(HITS)
    assert set(frame["model"].to_list()) == {MODEL}
    assert frame["truncated"].null_count() == frame.height
    assert rows.format == "vlmevalkit"


def test_accuracy_table_is_refused_naming_the_result_table(tmp_path: Path) -> None:
    path = _write(tmp_path)
    with pytest.raises(InputError, match="_result table"):
        read_rows([str(path.parent / f"{MODEL}_AI2D_TEST_acc.csv")])
