"""Numeric calls of a casadi.Function without the per-call conversions.

Calling a casadi.Function on numpy arrays converts every argument to a DM
and every result back, which costs about 100 us, where the evaluation of a
small control law costs well under 1 us. A sampled controller is called
once per sample, 10 000 times in a 10 s run at 1 kHz, so the harness calls
laws through the Function's buffer: numpy arrays bound once as its
argument and result memory, filled and read in place.
"""

from __future__ import annotations

import casadi as ca
import numpy as np


class BufferedFunction:
    """``function`` called on numbers: ``self(*args)`` returns its first result as a flat numpy array.

    Parameters
    ----------
    function : casadi.Function
        With dense inputs and outputs.
    """

    def __init__(self, function: ca.Function):
        self.function = function
        self._buffer, self._evaluate = function.buffer()
        self._args = [np.zeros(function.nnz_in(k)) for k in range(function.n_in())]
        self._results = [np.zeros(function.nnz_out(k)) for k in range(function.n_out())]
        for k, array in enumerate(self._args):
            self._buffer.set_arg(k, memoryview(array))
        for k, array in enumerate(self._results):
            self._buffer.set_res(k, memoryview(array))

    def __call__(self, *args) -> np.ndarray:
        for target, value in zip(self._args, args):
            target[:] = np.ravel(value)
        self._evaluate()
        return self._results[0].copy()

    def results(self, *args) -> tuple[np.ndarray, ...]:
        """Every result of ``function`` on ``args``, as flat numpy arrays."""
        self(*args)
        return tuple(result.copy() for result in self._results)

    def __getstate__(self) -> dict:
        return {"function": self.function}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["function"])
