"""Every `robot-dynamics ...` command line in README.md and docs/*.md is one the command line accepts (issue 38: the
docs offered `--root-joint planar`, which bringup refused): each goes through the CLI's argument parser, parsed
only, not run. In a documented line, `[...]` marks an optional part (parsed with it) and `a|b` alternatives (each
parsed), and the placeholders of numbers (D, N, MU, GX) stand for an example value; lines with placeholders in angle
brackets or `...`, and the bare name of a subcommand in prose (`robot-dynamics record`), are left out. In a page's
section named after a subcommand (`## bringup`), each inline `--option value` is parsed as that subcommand's."""
import itertools
import os
import re
import shlex

import pytest

from robot_dynamics_ros.cli import SUBCOMMANDS, build_parser

from test_docs import PAGES, ROOT, read

COMMAND = re.compile(r'(?:^|&&\s*|`)(robot-dynamics\s[^`#\n]*)')


def documented_commands(text):
    """The `robot-dynamics ...` command lines of a page: in code blocks (line continuations joined, shell comments
    and the commands before `&&` dropped) and in inline code."""
    text = text.replace('\\\n', ' ')
    for line in text.splitlines():
        for command in COMMAND.findall(line):
            command = command.strip().rstrip('`').strip()
            if '<' in command or '...' in command or len(command.split()) < 3:
                continue
            yield command


NUMBERS = {'D': '10', 'N': '1', 'MU': '0.8', 'GX': '0', 'GY': '0', 'GZ': '-9.81', 'DEG': '1', 'MM': '1',
           'SECONDS': '60'}   # placeholders of numbers -> an example value


def variants(command):
    """The argument lists a documented command line stands for: optional parts included, each alternative."""
    words = shlex.split(command.replace('[', ' ').replace(']', ' '))[1:]
    choices = [[NUMBERS.get(choice, choice) for choice in word.split('|')] for word in words]
    return [list(combination) for combination in itertools.product(*choices)]


def documented_options(text):
    """`robot-dynamics SUBCOMMAND --option value ...` for each inline `--option value ...` in a page's section named
    after a subcommand (`## bringup`); an option named without a value is a mention, not a command line."""
    for section in re.split(r'^## ', text, flags=re.MULTILINE)[1:]:
        name = section.split(None, 1)[0]
        if name not in SUBCOMMANDS:
            continue
        for span in re.findall(r'`(--[a-z][^`]*)`', section):
            if ' ' in span:
                yield f'robot-dynamics {name} {span}'


COMMANDS = [(os.path.relpath(page, ROOT), command) for page in PAGES
            for command in [*documented_commands(read(page)), *documented_options(read(page))]]


def test_the_commands_are_found():
    """(Else the test below would pass on nothing.) The README's first command and a continued line are found."""
    commands = [command for _, command in COMMANDS]
    assert ('README.md', 'robot-dynamics bringup --duration 10 --plot tracking.png') in COMMANDS, commands
    assert any('solo12.urdf' in c and '--duration' in c for c in commands), commands
    assert variants('robot-dynamics demo [URDF]') == [['demo', 'URDF']]
    assert variants('robot-dynamics bringup --root-joint floating|planar') == [
        ['bringup', '--root-joint', 'floating'], ['bringup', '--root-joint', 'planar']]
    assert ('docs/command_line.md', 'robot-dynamics bringup --sync lockstep') in COMMANDS


@pytest.mark.parametrize('page, command', COMMANDS, ids=[f'{page}: {command}' for page, command in COMMANDS])
def test_documented_command_lines_parse(page, command):
    parser, _ = build_parser()
    for arguments in variants(command):
        try:
            parser.parse_args(arguments)
        except SystemExit:
            pytest.fail(f"{page}: `{command}` is refused by the command line as {arguments}")
