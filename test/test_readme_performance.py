"""README.md's performance table is what its benchmarks printed: each row is the row its script stored in
benchmarks/results/<script>.txt when run with --store (benchmarks/readme_rows.py), as docs/parameters.md is its
generator's output (test_docs.py). A figure edited by hand in the README, or a stored row edited without the README,
fails here; a new measurement changes both."""
import os
import re

import pytest

from conftest import ROOT

RESULTS = os.path.join(ROOT, 'benchmarks', 'results')
SCRIPT = re.compile(r'\[(bench_\w+\.py)\]\(benchmarks/\1\) \|$')


def performance_rows(readme_text):
    """The table rows of the README's "## Performance" section (header and rule left out)."""
    section = readme_text.split('\n## Performance\n', 1)[1].split('\n## ', 1)[0]
    rows = [line for line in section.splitlines() if line.startswith('|')]
    return rows[2:]


def stored_rows(script):
    """The rows benchmarks/``script`` stored (its --store output), or None where it stored none."""
    path = os.path.join(RESULTS, os.path.splitext(script)[0] + '.txt')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [line for line in f.read().splitlines() if line.startswith('|')]


def mismatches(readme_text):
    """What differs between the README's performance rows and the stored ones, one line each."""
    rows, problems = performance_rows(readme_text), []
    scripts = []
    for row in rows:
        match = SCRIPT.search(row)
        if match is None:
            problems.append(f'a row names no benchmark script: {row}')
            continue
        script = match.group(1)
        scripts.append(script)
        stored = stored_rows(script)
        if stored is None:
            problems.append(f'{script} stored no rows (run it with --store)')
        elif row not in stored:
            problems.append(f'README row differs from what {script} stored:\n  {row}\n  stored: {stored}')
    for script in sorted(set(scripts)):
        for row in stored_rows(script) or []:
            if row not in rows:
                problems.append(f'{script} stored a row the README lacks: {row}')
    return problems


def readme():
    with open(os.path.join(ROOT, 'README.md')) as f:
        return f.read()


def test_readme_performance_rows_are_the_stored_benchmark_rows():
    assert performance_rows(readme()), 'no rows in the README performance table'
    assert mismatches(readme()) == []


@pytest.mark.parametrize('index', range(6))
def test_a_figure_edited_by_hand_is_found(index):
    """Each row's first digit changed, as a hand edit would, is reported."""
    text = readme()
    row = performance_rows(text)[index]
    what, figure, script = row[2:-2].split(' | ')
    edited = re.sub(r'\d', lambda digit: str((int(digit.group()) + 1) % 10), figure, count=1)
    assert edited != figure
    problems = mismatches(text.replace(row, f'| {what} | {edited} | {script} |'))
    assert any(problem.startswith('README row differs') for problem in problems)


def test_every_stored_row_comes_from_a_benchmark_that_repeats_and_prints_it():
    """The scripts behind the table take --runs and --store (readme_rows.add_arguments, or their own parsing)."""
    for script in {SCRIPT.search(row).group(1) for row in performance_rows(readme())}:
        with open(os.path.join(ROOT, 'benchmarks', script)) as f:
            source = f.read()
        assert 'readme_rows.report(' in source, script
        assert 'add_arguments(' in source or ("'--runs'" in source and "'--store'" in source), script
