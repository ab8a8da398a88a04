"""scripts/check_standalone.py: which lines tie the repository to one machine or to files outside
it, and which only look as if they did (URLs, placeholders, mktemp templates, scratch files)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scripts.check_standalone import findings, main


@pytest.mark.parametrize(
    ("line", "path"),
    [
        pytest.param("    python bench/simulate.py /work/hostdumps", "/work/hostdumps", id="work"),
        pytest.param("cd /work", "/work", id="work-alone"),
        pytest.param("PATH=/usr/bin:/work/bin", "/work/bin", id="after-colon"),
        pytest.param("see `/work/main/README.md`.", "/work/main/README.md", id="backticks"),
        pytest.param('"cache": "/root/.cache/tg"', "/root/.cache/tg", id="root-home"),
        pytest.param("HOME=/root", "/root", id="root-alone"),
        pytest.param("(/home/kim/src/x.py)", "/home/kim/src/x.py", id="home"),
        pytest.param("/Users/jsmith/code", "/Users/jsmith/code", id="macos-home"),
        pytest.param(r"C:\Users\jsmith\AppData", r"C:\Users\jsmith\AppData", id="windows"),
        pytest.param(r'"C:\\Users\\jsmith\\x"', r"C:\\Users\\jsmith\\x", id="windows-json"),
        pytest.param("C:/Users/jsmith/x", "C:/Users/jsmith/x", id="windows-slashes"),
        pytest.param("cd /tmp/h5-clone/tests", "/tmp/h5-clone/tests", id="named-tmp-folder"),
        pytest.param("/var/folders/xy/T/tmp1", "/var/folders/xy/T/tmp1", id="macos-tmp"),
        pytest.param("file:///work/x.html", "/work/x.html", id="file-url"),
    ],
)
def test_a_machine_path_is_found(line: str, path: str):
    assert list(findings(f"first line\n{line}\n")) == [(2, f"machine path {path!r}")]


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("https://example.com/work/x and http://h/root/y", id="url"),
        pytest.param("https://github.com/o/r/blob/main/home/kim/x", id="url-home"),
        pytest.param("bench/work/x, ~/work/x, $HOME/work/x, ./root/x", id="relative"),
        pytest.param("/workspace/x /rooted /homework/x /usr/bin/python3", id="other-roots"),
        pytest.param("'/home/me/.venv/bin/python', /home/dev/project/a.py", id="placeholder-user"),
        pytest.param("/home/<user>/x /home/$USER/x /Users/*/Library", id="placeholder-template"),
        pytest.param(r"C:\Users\<you>\x C:\Users\%USERNAME%\x", id="windows-placeholder"),
        pytest.param("WORK=$(mktemp -d /tmp/vsc-run.XXXXXX); ls /tmp/vsc-run.XXXXXX/", id="mktemp"),
        pytest.param("/tmp/tg-copilot-test.*/requests.json /tmp/$RUN/x", id="tmp-template"),
        pytest.param("TG_COPILOT_TRACE=/tmp/trace.json, storageDir /tmp/tg", id="tmp-scratch"),
    ],
)
def test_what_only_looks_like_a_machine_path_is_not(line: str):
    assert list(findings(line)) == []


@pytest.mark.parametrize(
    ("line", "reference"),
    [
        pytest.param("the checkout beside ../shared/fixtures/wire", "../shared", id="beside"),
        pytest.param("captures in shared/fixtures/wire", "shared/fixtures", id="fixtures"),
        pytest.param("recipe: shared/vscode-host/COPILOT.md", "shared/vscode-host", id="host"),
        pytest.param("The design is in DESIGN.md.", "DESIGN.md", id="design"),
        pytest.param("the shapes of DESIGN §3", "DESIGN §", id="design-section"),
    ],
)
def test_a_reference_outside_the_repository_is_found(line: str, reference: str):
    assert list(findings(line)) == [(1, f"reference outside the repository {reference!r}")]


def test_what_only_looks_like_a_reference_is_not():
    text = "ARCHITECTURE §3; a shared folder; shared/ pure Python; the design of DESIGNER.md"
    assert list(findings(text)) == []


def test_the_check_reads_the_tracked_text_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "ok.md").write_text("nothing here but /tmp/x\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\0/work/x")  # not text: skipped
    (tmp_path / "untracked.md").write_text("/work/x\n")  # not tracked: not read
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "ok.md", "image.png"], check=True)
    assert main(tmp_path) == 0

    (tmp_path / "bad.py").write_text('"""Run it on /root/data."""\n')
    subprocess.run(["git", "-C", str(tmp_path), "add", "bad.py"], check=True)
    capsys.readouterr()
    assert main(tmp_path) == 1
    assert "bad.py:1: machine path '/root/data'" in capsys.readouterr().out
