"""``tpcstudy completion bash``: the script completes verbs, actions and options as bash runs it
(generated from the parsers, so a new option is completed without editing it)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tpcstudy.cli import build_parser
from tpcstudy.cli.completion import bash_script


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_verbs_actions_and_options(tmp_path):
    script = tmp_path / "tpcstudy.bash"
    script.write_text(bash_script(build_parser()))
    cases = {"tpcstudy em": "emulate", "tpcstudy emulate po": "policies",
             "tpcstudy emulate policies --rep": "--repeat",
             "tpcstudy maxflow --ove": "--overwrite",
             "tpcstudy disjoint --topo zoo --js": "--json",
             "tpcstudy export --pairs": "--pairs-file",  # the deprecated --pairs is not offered
             "tpcstudy agent ": "check load update status unload",
             "tpcstudy emulate --topo zoo/Abilene --heavy 20 --mo": "--models"}
    driver = "\n".join(
        [f"source {script}"]
        + [f'read -ra COMP_WORDS <<< "{line}"; '
           + ('COMP_WORDS+=(""); ' if line.endswith(" ") else "")
           + 'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tpcstudy; echo "${COMPREPLY[*]}"'
           for line in cases])
    out = subprocess.run(["bash", "--norc", "-c", driver], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == list(cases.values())


def test_the_script_holds_only_the_parsers_words():
    text = bash_script(build_parser())
    assert "$(" not in text.split("_tpcstudy() {")[0]  # the tables: plain words, no expansion
    assert '"emulate policies") echo "' in text and "--pairs-file" in text


def test_completion_knows_topologies_and_networks(capsys):
    from tpcstudy.cli import main
    from tpcstudy.cli.completion import words

    topo = words("topo")
    assert {"zoo", "zoo/Abilene", "repetita/inverse-capacity",
            "repetita/inverse-capacity/Sprint", "repetita/unary/Abilene"} <= set(topo)
    assert main(["completion", "--words", "network"]) == 0  # the names up (maybe none)
    capsys.readouterr()
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert 'if [[ "$prev" == "--topo" ]]' in script and "completion --words topo" in script
    assert '"emulate inspect"|"emulate pingall"' in script and "--words network" in script
