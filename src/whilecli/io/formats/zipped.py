"""Zip archives read into memory (inspect_ai ``.eval`` logs, ``torch.save`` files): what
their members may unpack to before anything is unpacked."""

from __future__ import annotations

import zipfile

from whilecli.errors import InputError
from whilecli.io.sources import memory_limit_error, stream_limit

#: A member this many times its packed size, past :data:`BOMB_FLOOR` bytes, is a
#: decompression bomb (JSON text packs about tenfold; a reply repeating one token for its
#: whole budget, a few hundredfold in a few megabytes).
BOMB_RATIO = 200
BOMB_FLOOR = 64 << 20


def refuse_bombs(entries: list[zipfile.ZipInfo], name: str) -> None:
    """Refuse, before unpacking anything, members that would unpack past what is read into
    memory (:func:`whilecli.io.sources.stream_limit`, all together) or one that unpacks
    :data:`BOMB_RATIO` times its packed size past :data:`BOMB_FLOOR` (a decompression bomb:
    JSON text packs about tenfold)."""
    limit = stream_limit()
    total = 0
    for entry in entries:
        size, packed = entry.file_size, max(entry.compress_size, 1)
        if size > BOMB_FLOOR and size > BOMB_RATIO * packed:
            raise InputError(
                f"the member unpacks to {size:,} bytes from {packed:,} ({size // packed:,} to 1):"
                " a decompression bomb (no rollout log packs so tightly); refused unread",
                file=f"{name}: member {entry.filename}",
            )
        total += size
        if total > limit:
            raise memory_limit_error(limit, name, "archive's members, unpacked,")
