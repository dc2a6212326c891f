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


PARAGRAPHS_EXAMPLE = re.search(r"^\$ printf '([^']*)' \| punctum restore --paragraphs\n(.*?)\n```",
                               README.read_text(encoding="utf-8"), re.M | re.S)


def test_readme_paragraphs_output_is_the_real_one(tmp_path, capsys):
    from punctum.cli import main

    text, shown = PARAGRAPHS_EXAMPLE.groups()
    path = tmp_path / "in.txt"
    path.write_text(text.replace("\\n", "\n"), encoding="utf-8")
    assert main(["restore", "--paragraphs", "-i", str(path)]) == 0
    assert capsys.readouterr().out == shown + "\n"


TRAIN_RECIPES = [block for block in re.findall(r"```toml\n(.*?)```",
                                               README.read_text(encoding="utf-8"), re.S)
                 if "[train]" in block]


@pytest.mark.parametrize("block", TRAIN_RECIPES,
                         ids=[f"recipe{i}" for i in range(len(TRAIN_RECIPES))])
def test_readme_recipes_are_valid(block, tmp_path):
    """Recipe examples parse into Recipe dataclasses once their data files exist."""
    import tomllib

    pytest.importorskip("torch")
    from punctum.train.recipe import parse_recipe
    from punctum.train.recover import is_artifact

    raw = tomllib.loads(block)
    data = raw.get("data", {})
    for path in [data.get("dev")] + [s["path"] for s in data.get("sources", [])]:
        if path:
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text("Hello, world.\n", encoding="utf-8")
    recipe = parse_recipe(raw, tmp_path)
    if recipe.train.init_from:
        assert is_artifact(recipe.train.init_from)


CURL_EXAMPLES = re.findall(r"""-d '(\{"text": [^']*\})'\n# (\{.*\})\n""",
                           README.read_text(encoding="utf-8"))


def test_readme_server_output_is_what_the_model_writes():
    """The shown response text is the bundled model's restore of the request text."""
    import json

    from punctum import Punctuator

    assert CURL_EXAMPLES
    punctuator = Punctuator.load()
    for request, response in CURL_EXAMPLES:
        text = json.loads(request)["text"]
        assert json.loads(response)["text"] == punctuator.restore(text), text
