"""Method names as typed: key, label, any case, - or _."""

import pytest

from whilecli.names import METHOD_LABELS, method_key

KNOWN = ("flash_reinforce", "sao", "grpo", "max_rl", "rae", "groupwise")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("flash_reinforce", "flash_reinforce"),
        ("FlashReinforce", "flash_reinforce"),
        ("flash-reinforce", "flash_reinforce"),
        ("FLASH_REINFORCE", "flash_reinforce"),
        ("SAO", "sao"),
        ("MaxRL", "max_rl"),
        ("max-rl", "max_rl"),
        ("prime-rl rae", "rae"),
        ("GroupwiseGrading", "groupwise"),
        ("grp", None),
        ("sft", None),
    ],
)
def test_method_key(text: str, key: str | None) -> None:
    assert method_key(text, KNOWN) == key


def test_every_label_names_its_key() -> None:
    for key, label in METHOD_LABELS.items():
        assert method_key(label, METHOD_LABELS) == key
