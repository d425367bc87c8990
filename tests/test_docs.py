"""The README and docs/ show working code: every code block is run.

``python`` blocks are executed in order, one namespace per document;
``sh`` blocks are run by bash (a block that repeats another word for word,
once); ``toml`` blocks must parse (and an arm
specification must load). All run in a fresh folder that has the source
tree's ``fmus`` and ``harness`` folders beside it, as a user's checkout has,
with this environment's ``flexfmu`` first on the PATH. Blocks in other
languages (``text`` output, ``matlab``, ``cmake``) are not run; a block may
opt out only with a ``<!-- not run: reason -->`` line right before it, and
the reasons are printed. A ``text`` block right after a ``<!-- output of the
block above -->`` line must be exactly what the python block before it prints;
a block after ``<!-- file: NAME -->`` is also saved as NAME for the blocks
that follow it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import runpy
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

import flexfmu

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "fmus" / "arms" / "README.md"]
RUN = ("python", "sh", "toml")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```\s*$", re.M | re.S)
OPT_OUT = re.compile(r"<!-- not run: (?P<reason>[^>]+) -->\s*$")
OUTPUT = re.compile(r"<!-- output of the block above -->\s*$")
FILE = re.compile(r"<!-- file: (?P<name>[\w.-]+) -->\s*$")


@dataclass(frozen=True)
class Block:
    document: Path
    line: int
    language: str
    body: str
    opt_out: str | None
    is_output: bool = False
    file: str | None = None

    @property
    def label(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def blocks(document: Path) -> list[Block]:
    text = document.read_text()
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").splitlines()
        opt_out = OPT_OUT.search(before[-1]) if before else None
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines())
        is_output = bool(before and OUTPUT.search(before[-1]))
        file = FILE.search(before[-1]) if before else None
        found.append(Block(document, text.count("\n", 0, match.start()) + 1, match.group("lang"), body,
                           opt_out.group("reason") if opt_out else None, is_output,
                           file.group("name") if file else None))
    return found


ALL = [block for document in DOCUMENTS for block in blocks(document)]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A working folder that looks like a user's checkout from the outside."""
    folder = tmp_path_factory.mktemp("docs")
    for name in ("fmus", "harness"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def environment():
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return env


def test_every_document_has_runnable_blocks():
    runnable = {block.document for block in ALL if block.language in RUN and block.opt_out is None}
    assert {ROOT / "README.md", ROOT / "docs" / "spec.md"} <= runnable


def test_opt_outs_give_reasons(capsys):
    skipped = [f"{block.label}: {block.opt_out}" for block in ALL if block.opt_out]
    with capsys.disabled():
        print("\ndoc blocks not run:\n  " + "\n  ".join(skipped))
    assert all(len(block.opt_out) > 10 for block in ALL if block.opt_out)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(ROOT)))
def test_python_blocks_run(document, checkout, monkeypatch):
    monkeypatch.chdir(checkout)
    namespace: dict = {}
    printed = None
    for block in blocks(document):
        if block.file:
            Path(block.file).write_text(block.body + "\n")
        if block.is_output:
            assert printed is not None, f"{block.label}: an output block must follow a python block"
            assert printed.strip() == block.body.strip(), f"{block.label}: the docs show\n{block.body}\nbut it prints\n{printed}"
        elif block.language == "python" and block.opt_out is None:
            stream = io.StringIO()
            try:
                with contextlib.redirect_stdout(stream):
                    exec(compile(block.body, block.label, "exec"), namespace)
            except Exception as error:
                pytest.fail(f"{block.label}: {type(error).__name__}: {error}")
            printed = stream.getvalue()


def first_of_each(blocks: list[Block]) -> list[Block]:
    """``blocks`` without the ones whose body repeats an earlier block's word for word (two guides that give
    the same steps): running the same commands again in the same folder would prove nothing more."""
    first: dict[str, Block] = {}
    for block in blocks:
        first.setdefault(block.body, block)
    return list(first.values())


SH_BLOCKS = first_of_each([block for block in ALL if block.language == "sh" and block.opt_out is None])


@pytest.mark.slow
@pytest.mark.compiler
@pytest.mark.parametrize("block", SH_BLOCKS, ids=lambda b: b.label)
def test_shell_blocks_run(block, checkout):
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.body], cwd=checkout, env=environment(),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{block.label} failed:\n{block.body}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("block", [b for b in ALL if b.language == "toml" and b.opt_out is None],
                         ids=lambda b: b.label)
def test_toml_blocks_parse(block):
    data = tomllib.loads(block.body)
    if "link" in data or data.get("kind") in ("planar", "spatial", "delta"):
        flexfmu.arm_from_dict(data, source=block.label)


def test_generated_docs_are_current():
    """docs/cli.md and the README's lists are what scripts/docs.py writes from the parsers and the tables."""
    script = runpy.run_path(str(ROOT / "scripts" / "docs.py"))
    assert script["cli_page"]() == (ROOT / "docs" / "cli.md").read_text(), "run python scripts/docs.py"
    readme = (ROOT / "README.md").read_text()
    assert script["readme"](readme) == readme, "run python scripts/docs.py"
    assert set(re.findall(r"<!-- generated: (\w+) -->", readme)) == set(script["BLOCKS"])


def test_the_architecture_page_lists_the_layers_the_layer_test_enforces():
    from tests.test_layers import LAYERS

    rows = re.findall(r"^\| (\d+) \| (.+?) \|", (ROOT / "docs" / "architecture.md").read_text(), re.M)
    documented = {name.strip("` "): int(floor) for floor, names in rows for name in names.split(",")}
    assert documented == LAYERS


def test_no_file_cites_a_document_outside_the_repository():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    cited = []
    for name in tracked.split():
        path = ROOT / name
        if path == Path(__file__).resolve():  # this test names what it looks for
            continue
        if path.suffix in (".py", ".md", ".toml", ".c", ".h", ".m", ".in", ".sh", ".txt") and path.is_file():
            text = path.read_text(errors="replace")
            cited += [f"{name}: {word}" for word in ("DESIGN.md", "../shared", "/work/shared") if word in text]
    assert cited == []
