"""Overlapping the mask round trip with the model's forward pass.

Step t+1's mask depends only on the tokens sampled at step t, exactly like
step t+1's forward pass, so both can start together: send the tokens to maskd,
run the forward pass, then wait for the masks (usually already there). The
time saved per step is min(forward, round trip).
"""
import asyncio
import inspect
from typing import Callable, Dict, Mapping, Optional, Tuple, TypeVar

from .results import StepResult
from .session import AdvanceArg

T = TypeVar("T")


def overlapped_step(session, advances: Optional[Mapping[int, AdvanceArg]],
                    forward: Callable[[], T], **step_kwargs) -> Tuple[T, Dict[int, StepResult]]:
    """Sends the step, runs `forward()` meanwhile, returns (forward's result, step's results).

    `forward` should release the GIL while it waits (GPU kernels, I/O, numpy do).
    """
    pending = session.submit(advances, **step_kwargs)
    try:
        out = forward()
    except BaseException:
        pending.result()  # keep the stream in step before re-raising
        raise
    return out, pending.result()


async def overlapped_step_async(session, advances: Optional[Mapping[int, AdvanceArg]],
                                forward, **step_kwargs) -> Tuple[object, Dict[int, StepResult]]:
    """asyncio form: `forward` is a coroutine function, or a plain function run in a thread."""
    pending = session.submit(advances, **step_kwargs)
    try:
        if inspect.iscoroutinefunction(forward):
            out = await forward()
        else:
            out = await asyncio.get_running_loop().run_in_executor(None, forward)
    except BaseException:
        await asyncio.gather(pending, return_exceptions=True)
        raise
    return out, await pending
