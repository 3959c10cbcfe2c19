"""Registering an implementation of a NetworkX function: :func:`networkx_algorithm`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import NamedTuple


class Algorithm(NamedTuple):
    """A registered implementation: ``func`` has the NetworkX function's
    signature; ``can_run`` and ``should_run`` take the same arguments and return
    True or a string that says why not."""

    func: Callable
    can_run: Callable
    should_run: Callable
    signature: inspect.Signature


#: name of the NetworkX function -> its implementation here.
ALGORITHMS: dict[str, Algorithm] = {}


def _yes(*args, **kwargs):
    return True


def networkx_algorithm(name: str, *, can_run: Callable = _yes, should_run: Callable = _yes):
    """Registers the decorated function as the backend's ``name``.

    ``can_run(G, ...)`` says whether the function gives exactly NetworkX's
    result for these arguments (else NetworkX runs its own); ``should_run(G,
    ...)`` whether it is worth it with automatic dispatch (both see the
    caller's arguments, before conversion). Both default to yes.
    """

    def register(func):
        if name in ALGORITHMS:
            raise KeyError(f"{name!r} is registered twice")
        ALGORITHMS[name] = Algorithm(func, can_run, should_run, inspect.signature(func))
        return func

    return register


def ask(check: Callable, algorithm: Algorithm, args, kwargs):
    """``check(...)`` on the caller's arguments bound to the function's
    signature; a string naming the problem when they do not bind."""
    try:
        bound = algorithm.signature.bind(*args, **kwargs)
    except TypeError as exc:
        return f"arguments the NetworkX signature does not take ({exc})"
    return check(*bound.args, **bound.kwargs)
