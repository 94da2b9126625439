"""Command-line arguments of the benchmark scripts: bad input is one line naming the flag, the value
and what is allowed, and a non-zero exit, before anything is measured (argparse's own errors print
the usage first, on two lines)."""
import argparse
import os
import sys

# The standard configurations of bench/standard_step.hpp, as the programs name them.
STANDARD_CONFIGS = ["encoder_decoder", "decoder_only", "large_decoder", "small"]


class OneLineArgumentParser(argparse.ArgumentParser):
    """argparse with its errors on one line: "<prog>: <what is wrong>", exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


def number_in(lo, hi, whole=False):
    """An argparse type: a number within [lo, hi] (a whole number with whole=True)."""
    def parse(text):
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            kind = "a whole number" if whole else "a number"
            raise argparse.ArgumentTypeError(f"\"{text}\" is not allowed: use {kind} from {lo} to {hi}")
        return value
    return parse


def require_files(prog, build, names, targets):
    """Exit with one line if a build product is missing: which one, and the command that builds it."""
    for name in names:
        path = os.path.join(build, name)
        if not os.access(path, os.X_OK):
            sys.exit(f"{prog}: {path} is missing: cmake --build {build} --target {' '.join(targets)}")


def new_output_file(prog, path):
    """Exit with one line unless `path` is a new file in an existing directory (nothing the user had
    is overwritten); returns its absolute path."""
    path = os.path.abspath(path)
    if os.path.exists(path):
        sys.exit(f"{prog}: {path} exists: give a new file name (it is not overwritten)")
    if not os.path.isdir(os.path.dirname(path)):
        sys.exit(f"{prog}: the directory of {path} does not exist")
    return path
