"""The words a fault is told in: the runtime's own, taken from a dead child's stderr."""

import subprocess
import sys

import pytest

from scancheck.isolation.watch import fault_message

_HOOK = ("import sys\n"
         "def hook(*exc): raise ValueError('the hook itself failed')\n"
         "sys.excepthook = hook\n")


def _stderr(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stderr


def test_a_failing_excepthook_leaves_the_original_exception_as_the_message():
    # Python prints the hook's failure first, then the exception the process died of.
    err = _stderr(_HOOK + "raise RuntimeError('CUDA error: an illegal memory access')")
    assert "Error in sys.excepthook" in err  # the layout this reads, as this Python prints it
    assert fault_message(err, "died (exit status 1)") == (
        "RuntimeError: CUDA error: an illegal memory access")


def test_what_the_runtime_said_before_a_failing_excepthook_is_kept():
    # The original exception names no fault: the runtime's line before the hook is the
    # message, not the hook's own error after it.
    err = _stderr(_HOOK + "import sys\n"
                  "print('CUDA error: an illegal memory access', file=sys.stderr)\n"
                  "class Lost(Exception): pass\n"
                  "raise Lost('device gone')")
    assert "the hook itself failed" in err and "Lost: device gone" in err
    assert fault_message(err, "died (exit status 1)") == "CUDA error: an illegal memory access"


@pytest.mark.parametrize("cut", ["header", "hook traceback"])
def test_a_process_killed_inside_its_excepthook_is_told_by_how_it_died(cut):
    # The original exception never printed: neither the hook's header nor its own error is
    # the fault; what the child said before the hook ran, or how it died, is.
    err = _stderr(_HOOK + "raise RuntimeError('CUDA error: an illegal memory access')")
    kept = err[:err.index("Traceback")] if cut == "header" else err[:err.index("Original")]
    assert fault_message(kept, "died (killed by signal 9)") == (
        "the process died (killed by signal 9)")
    said = "warning: device error 700 seen\n" + kept
    assert fault_message(said, "died (killed by signal 9)") == "warning: device error 700 seen"


def test_the_runtimes_last_words_are_the_message():
    err = _stderr("import sys; print('loading', file=sys.stderr); "
                  "raise MemoryError('cudaErrorIllegalAddress')")
    assert fault_message(err) == "MemoryError: cudaErrorIllegalAddress"
    assert fault_message("", "died (killed by signal 11)") == (
        "the process died (killed by signal 11)")
