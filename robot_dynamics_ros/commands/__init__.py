"""Subcommands of ``robot-dynamics`` (see cli.py), and the argument types they share: each refuses a value
out of range with a one-line reason."""
import argparse
import math
import os


def _number(text, kind):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not finite")
    return value


def positive_float(text):
    value = _number(text, float)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def non_negative_float(text):
    value = _number(text, float)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 0")
    return value


def finite_float(text):
    return _number(text, float)


def int_in(minimum, maximum=None):
    """An integer >= minimum (and <= maximum when given)."""
    def parse(text):
        value = _number(text, int)
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"lie in [{minimum}, {maximum}]" if maximum is not None else f"be at least {minimum}"
            raise argparse.ArgumentTypeError(f"{text!r} must {bound}")
        return value
    return parse


def float_in(low, high, low_open=False, high_open=False):
    """A number in the interval from low to high, each end closed unless *_open."""
    def parse(text):
        value = _number(text, float)
        if value < low or value > high or (low_open and value == low) or (high_open and value == high):
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise argparse.ArgumentTypeError(f"{text!r} must lie in {interval}")
        return value
    return parse


def writable_file(text):
    """A path a file can be written to (its directory exists and is writable; not a directory itself), checked
    when the arguments are read, before any work whose result it would hold."""
    directory = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    if not os.path.isdir(directory):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: no directory {directory!r}")
    if not os.access(directory, os.W_OK) or (os.path.exists(text) and not os.access(text, os.W_OK)):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: permission denied")
    return text
