"""The documentation stays true: docs/parameters.md is what the nodes' parameter tables generate, every relative
link in README.md and docs/*.md names a file that exists, and the README's Python example runs."""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, 'README.md')
DOCS = os.path.join(ROOT, 'docs')
PAGES = [README] + sorted(os.path.join(DOCS, name) for name in os.listdir(DOCS) if name.endswith('.md'))

LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')     # [text](target)
EXTERNAL = re.compile(r'^[a-z][a-z0-9+.-]*:', re.IGNORECASE)  # http:, https:, mailto:, ...


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


@pytest.mark.ros   # the node modules whose tables the reference is made from import rclpy
def test_parameter_reference_is_generated_from_the_tables():
    from robot_dynamics_ros.nodes.parameter_reference import reference
    assert read(os.path.join(DOCS, 'parameters.md')) == reference(), (
        "docs/parameters.md differs from the nodes' parameter tables: regenerate it with "
        "python -m robot_dynamics_ros.nodes.parameter_reference > docs/parameters.md")


def relative_links(path):
    text = re.sub(r'```.*?```', '', read(path), flags=re.DOTALL)   # code blocks hold no links
    for target in LINK.findall(text):
        if EXTERNAL.match(target) or target.startswith('#'):
            continue
        yield target.split('#', 1)[0]


@pytest.mark.parametrize('page', PAGES, ids=lambda page: os.path.relpath(page, ROOT))
def test_relative_links_point_to_existing_files(page):
    missing = [target for target in relative_links(page)
               if not os.path.exists(os.path.join(os.path.dirname(page), target))]
    assert not missing, f"{os.path.relpath(page, ROOT)} links to missing files: {missing}"


def test_links_are_found():
    """The link pattern finds the README's links to docs/ (else the test above would pass on nothing)."""
    assert any(target.startswith('docs/') for target in relative_links(README))


def test_readme_python_example_runs(monkeypatch):
    blocks = re.findall(r'```python\n(.*?)```', read(README), flags=re.DOTALL)
    assert len(blocks) == 1, "the README has one Python example"
    monkeypatch.chdir(ROOT)   # its paths are relative to the repository, as a reader runs it
    exec(compile(blocks[0], 'README.md', 'exec'), {'__name__': '__readme__'})
