"""XGrammar (PyPI ``xgrammar``, the grammar engine of vLLM and SGLang) in an environment of its own, for the
grammar tests.

Why not in the development environment: ``xgrammar`` 0.2.9 imports torch and transformers when it is
imported (its matcher and tokenizer modules), and requires them: torch 2.14 from PyPI brings CUDA 13's
libraries, triton and transformers, 5.7 GB installed. So it lives beside llama-server in the cache outside
the clone (``$PLAINMCP_CACHE``, default ``~/.cache/plainmcp``: ``xgrammar/<version>/venv``), built once per
machine (1 min 45 s here), and the tests talk to it through one subprocess per check.

    python3 tests/bridge/xgrammar_env.py build   # create the environment when missing, print its python
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import llama_server

VERSION = "0.2.9"

#: Run in the XGrammar environment: reads ``{key: {"schema": ...} | {"ebnf": ..., "accept": [...]}}`` on
#: stdin, writes ``{key: null | "error" | {"accepted": [bool...]}}``. A schema is compiled the way vLLM
#: compiles a ``response_format`` (``compile_json_schema`` against a vocabulary); a GBNF text is parsed as
#: XGrammar EBNF and compiled, then each ``accept`` string is matched against it.
CHECK = r"""
import json, sys
import xgrammar as xg
def accepts(compiled, text):
    matcher = xg.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return matcher.accept_string(text) and matcher.is_terminated()
vocab = [bytes([b]).decode("latin-1") for b in range(256)]
compiler = xg.GrammarCompiler(xg.TokenizerInfo(vocab), max_threads=1)
answers = {}
for key, item in json.load(sys.stdin).items():
    try:
        if "schema" in item:
            compiler.compile_json_schema(json.dumps(item["schema"]), any_whitespace=True)
            answers[key] = None
        else:
            compiled = compiler.compile_grammar(xg.Grammar.from_ebnf(item["ebnf"]))
            answers[key] = {"accepted": [accepts(compiled, text) for text in item.get("accept", [])]}
    except Exception as error:
        answers[key] = f"{type(error).__name__}: {error}"[:400]
json.dump(answers, sys.stdout)
"""


def home() -> Path:
    return llama_server.cache() / "xgrammar" / VERSION


def python() -> Path:
    return home() / "venv" / "bin" / "python"


def build_command() -> str:
    return f"python3 tests/bridge/xgrammar_env.py build  # ~2 min, 5.7 GB (torch) into {home()}"


def build() -> Path:
    """The environment, created when missing (``pip install xgrammar==VERSION`` with its dependencies)."""
    if python().exists():
        return python()
    target = home() / "venv"
    venv.create(target, with_pip=True, clear=True)
    pip = [str(target / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "install", "--quiet"]
    subprocess.run([*pip, f"xgrammar=={VERSION}"], check=True)
    return python()


def check(items: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each item checked by XGrammar (see :data:`CHECK`); raises CalledProcessError when the check itself fails."""
    done = subprocess.run(
        [str(python()), "-c", CHECK], input=json.dumps(items), capture_output=True, text=True, timeout=300, check=True
    )
    answers: dict[str, Any] = json.loads(done.stdout)
    return answers


if __name__ == "__main__":
    if sys.argv[1:] != ["build"]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print(build())
