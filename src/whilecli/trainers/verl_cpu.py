"""verl's actor on a machine with no accelerator: a CPU platform and a one-process group.

verl 0.9's actor is its ``TrainingWorker`` (``engine_workers.py``: ``train_mini_batch`` →
the FSDP engine's ``train_batch`` with ``ppo_loss``, the registered policy loss inside it).
It expects a device platform and a process group, and picks its engine by device. Three
things let it run on a CPU, each through a switch verl itself has:

- :class:`CPUPlatform`, a ``PlatformBase`` registered in verl's ``PlatformRegistry`` as
  ``cpu`` and made the current platform (verl's own auto-detection finds no accelerator
  and falls back to CUDA, which then fails): device ``cpu``, collective backend ``gloo``,
  memory figures 0;
- verl's FSDP engine for causal LMs (``FSDPEngineWithLMHead``) registered for device
  ``cpu`` in verl's ``EngineRegistry`` (verl registers it for ``cuda`` and ``npu`` only);
  the engine runs FSDP2 (``fully_shard``), whose one-rank mesh is a plain module on a CPU;
- a single-process ``gloo`` group (world size 1) when none exists, as a one-GPU verl run
  has a one-rank group.

:func:`without_trl_value_head` covers one incompatibility inside the pinned pair: while
building a model, verl 0.9.1 patches ``state_dict`` of TRL's
``AutoModelForCausalLMWithValueHead`` whenever TRL is importable, and TRL 1.x no longer has
that class (nor ``trl.experimental.ppo``), so the build fails in an environment that holds
both. The patch concerns value-head models only; the actor here has none.
"""

from __future__ import annotations

import contextlib
import os
import types
from collections.abc import Iterator
from typing import Any

import torch
from verl.plugin.platform import platform_manager
from verl.plugin.platform.platform_base import PlatformBase


def _zero(*_: Any) -> int:
    return 0


def _nothing(*_: Any) -> None:
    return None


#: What verl calls on ``get_torch_device()``, for a CPU.
CPU_DEVICE_MODULE = types.SimpleNamespace(
    current_device=lambda: "cpu",
    device_count=lambda: 1,
    is_available=lambda: True,
    set_device=_nothing,
    synchronize=_nothing,
    manual_seed=torch.manual_seed,
    manual_seed_all=torch.manual_seed,
    empty_cache=_nothing,
    reset_peak_memory_stats=_nothing,
    max_memory_allocated=_zero,
    max_memory_reserved=_zero,
    memory_allocated=_zero,
    memory_reserved=_zero,
    mem_get_info=lambda *_: (0, 0),
    get_device_name=lambda *_: "CPU",
)


class CPUPlatform(PlatformBase):
    """verl's platform interface for a CPU (device ``cpu``, backend ``gloo``)."""

    device_name = "cpu"
    vendor_name = "cpu"
    device_module = CPU_DEVICE_MODULE

    def is_available(self) -> bool:
        return True

    def current_device(self) -> Any:
        return "cpu"  # verl moves modules with .to(device=current_device())

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return (None, None)

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextlib.contextmanager
    def nvtx_range(self, msg: str) -> Iterator[None]:
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "CPU"

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


def use_cpu() -> None:
    """Make verl run on the CPU in this process: the platform, the engine registration and
    a one-process gloo group (each left in place when already there). On a machine with a
    GPU too: the toy runs are CPU runs wherever they run, and this process's verl with them."""
    platform_manager.PlatformRegistry.register(platform="cpu")(CPUPlatform)
    if not isinstance(platform_manager.get_platform(), CPUPlatform):
        platform_manager.set_platform(CPUPlatform())
    from verl.workers.engine.base import EngineRegistry
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngineWithLMHead

    engines = EngineRegistry._engines["language_model"]
    for backend in ("fsdp", "fsdp2"):
        if "cpu" not in engines[backend]:
            EngineRegistry.register(model_type="language_model", backend=backend, device="cpu")(
                FSDPEngineWithLMHead
            )
    # verl's Worker reads these when it is built; one rank of one
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1")):
        os.environ.setdefault(key, value)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "0")
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(
            "gloo", store=torch.distributed.HashStore(), rank=0, world_size=1
        )


@contextlib.contextmanager
def without_trl_value_head() -> Iterator[None]:
    """verl's model build with its TRL value-head patch skipped (see the module text)."""
    from verl.models.transformers import monkey_patch

    kept = monkey_patch.is_trl_available
    monkey_patch.is_trl_available = lambda: False
    try:
        yield
    finally:
        monkey_patch.is_trl_available = kept
