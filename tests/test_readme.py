"""The README's Python examples run as written (with the bundled model)."""

import re
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code, capsys):
    exec(compile(code, str(README), "exec"), {})


SHELL_EXAMPLES = re.findall(r'^\$ echo "([^"]*)" \| punctum restore( [^\n]*)?\n(.*)$',
                            README.read_text(encoding="utf-8"), re.M)


def test_readme_restore_outputs_are_the_real_ones(capsys):
    """The README calls these real output of the bundled model: keep them so."""
    from punctum.cli import main

    assert len(SHELL_EXAMPLES) >= 4
    for text, flags, shown in SHELL_EXAMPLES:
        assert main(["restore", *flags.split(), text]) == 0
        assert capsys.readouterr().out == shown + "\n", (text, flags)
