"""The rows of README.md's performance table, as the benchmarks that measure them print them.

Each benchmark that feeds the table ("## Performance") runs its repeats itself (``--runs N``) and ends by printing
its row(s), ``| what | figure | [script](benchmarks/script) |``, the figure a median over the runs (with its ratio
against the oracle timed in the same run, Pinocchio or MuJoCo, where the benchmark has one). ``--store`` also writes
them to results/<script>.txt with the date, the load average and the runs: test/test_readme_performance.py checks
that the README's rows are these stored rows, so a README figure changes only by running its benchmark.
"""
import os
import time

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')


def add_arguments(parser, runs):
    """``--runs`` (default ``runs``) and ``--store`` on an argparse parser."""
    parser.add_argument('--runs', type=int, default=runs,
                        help=f'repeats; the README row is their median (default {runs})')
    parser.add_argument('--store', action='store_true', help='write the README row(s) to benchmarks/results/')


def row(script, what, figure):
    """A README table row measured by benchmarks/``script``."""
    return f'| {what} | {figure} | [{script}](benchmarks/{script}) |'


def report(script, rows, runs, store, load_before):
    """Print the README rows (and with ``store`` write them to results/<script stem>.txt, with the load average
    before and after the runs)."""
    load = f'load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after, on {os.cpu_count()} CPUs'
    header = [f'# {script}, median of {runs} run(s), {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}; {load}']
    print('\nREADME row(s):\n' + '\n'.join(header + rows))
    if store:
        os.makedirs(RESULTS, exist_ok=True)
        with open(os.path.join(RESULTS, os.path.splitext(script)[0] + '.txt'), 'w') as f:
            f.write('\n'.join(header + rows) + '\n')


def span(values, digits=0):
    """'a-b' (or 'a' when they round alike) of the smallest and largest of values."""
    low, high = f'{min(values):.{digits}f}', f'{max(values):.{digits}f}'
    return low if low == high else f'{low}-{high}'
