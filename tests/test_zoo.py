"""Installing the Topology Zoo: local mirror, real HTTP on 127.0.0.1, corruption, no network."""

from __future__ import annotations

import functools
import http.server
import io
import os
import shutil
import subprocess
import sys
import tarfile
import threading

import pytest

from tpcstudy import UsageError, ZooDataError
from tpcstudy.io import ZOO as zoo
from tpcstudy.io.datasets import ZOO_URL


@pytest.fixture()
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TPCSTUDY_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("TPCSTUDY_ZOO_MIRROR", raising=False)
    monkeypatch.delenv("TPCSTUDY_ZOO_URL", raising=False)
    return tmp_path / "data"


@pytest.fixture()
def http_mirror(tmp_path, zoo_mirror):
    """A real HTTP server on 127.0.0.1 serving a copy of the mirror (files and gml.tar.gz)."""
    root = tmp_path / "www"
    (root / "gml").mkdir(parents=True)
    for name in zoo.manifest():
        shutil.copy(zoo_mirror / name, root / "gml" / name)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in zoo.manifest():
            tar.add(root / "gml" / name, arcname=f"gml/{name}")
    (root / "gml.tar.gz").write_bytes(buf.getvalue())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[assignment]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_manifest_has_the_261_canonical_files():
    m = zoo.manifest()
    assert len(m) == 261 and "Kdl.gml" in m and all(len(d) == 64 for d in m.values())


def test_fetch_from_local_folder(data_dir, zoo_mirror):
    target = zoo.fetch(str(zoo_mirror))
    assert zoo.installed() and target == data_dir / "topologyzoo"
    assert len(list(target.glob("*.gml"))) == 261
    assert zoo.resolve("Abilene") == [target / "Abilene.gml"]
    assert zoo.resolve("abilene.gml") == [target / "Abilene.gml"]
    with pytest.raises(UsageError, match="did you mean zoo/Abilene"):
        zoo.resolve("Abilen")


def test_fetch_over_http_folder_and_archive(data_dir, http_mirror):
    root, url = http_mirror
    zoo.fetch(url + "/gml/")
    assert len(list(zoo.folder.glob("*.gml"))) == 261
    zoo.fetch(url + "/gml.tar.gz", force=True)
    assert len(list(zoo.folder.glob("*.gml"))) == 261


def test_corrupted_file_over_http_installs_nothing(data_dir, http_mirror):
    root, url = http_mirror
    bad = root / "gml" / "Abilene.gml"
    bad.write_bytes(bad.read_bytes().replace(b"Chicago", b"Chicagx"))
    with pytest.raises(ZooDataError, match="Abilene.gml has SHA256 .* nothing installed"):
        zoo.fetch(url + "/gml/")
    assert not zoo.installed() and not zoo.folder.exists()
    assert not data_dir.exists() or not any(p.name.startswith(".topologyzoo") for p in data_dir.iterdir())


def test_corrupted_fetch_keeps_a_previous_good_install(data_dir, http_mirror, zoo_mirror):
    root, url = http_mirror
    zoo.fetch(str(zoo_mirror))
    (root / "gml" / "Kdl.gml").write_bytes(b"graph [ ]")
    with pytest.raises(ZooDataError, match="Kdl.gml"):
        zoo.fetch(url + "/gml/", force=True)
    assert zoo.installed() and (zoo.folder / "Kdl.gml").read_bytes() == (zoo_mirror / "Kdl.gml").read_bytes()


def test_missing_file_in_mirror(data_dir, tmp_path, zoo_mirror):
    partial = tmp_path / "partial"
    partial.mkdir()
    for name in list(zoo.manifest())[:10]:
        shutil.copy(zoo_mirror / name, partial / name)
    with pytest.raises(ZooDataError, match="251 of 261 Topology Zoo files missing"):
        zoo.fetch(str(partial))
    assert not zoo.installed()


def test_no_network_no_mirror_says_how(data_dir, monkeypatch):
    monkeypatch.setenv("TPCSTUDY_ZOO_URL", "http://127.0.0.1:9/gml.tar.gz")  # nothing listens there
    with pytest.raises(ZooDataError) as info:
        zoo.ensure_installed()
    msg = str(info.value)
    assert "tpcstudy data fetch zoo --mirror DIR" in msg and ZOO_URL in msg


def test_cli_zoo_first_use_fetches_from_env_mirror(data_dir, zoo_mirror, tmp_path):
    env = dict(os.environ, TPCSTUDY_ZOO_MIRROR=str(zoo_mirror))
    # run outside the source tree so the installed package (with its compiled core) is imported
    out = subprocess.run([sys.executable, "-m", "tpcstudy", "topo", "stats", "--topo", "zoo/Kdl",
                          "--json"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert '"pruned_nodes": 680' in out.stdout and '"pruned_links": 821' in out.stdout
    bad = subprocess.run([sys.executable, "-m", "tpcstudy", "topo", "stats", "--topo", "nope.gml"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "nope.gml" in bad.stderr
