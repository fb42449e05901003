"""``tcpsack-analyze plot``: files written in each format, bad input refused with one line, and
the interactive page zooming to an incident in headless Chromium."""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcpsack_analyze.cli import main

ROOT = Path(__file__).resolve().parent.parent
SACK = ROOT / "sample_traces" / "lab_reno_sack_bursty"
THIN = ROOT / "sample_traces" / "lab_thin_stream" / "sender.pcap"
HTTP = ROOT / "sample_traces" / "http_206_sack_recovery.pcap"


def plot(*args: str | Path) -> tuple[int, str, str]:
    """``tcpsack-analyze plot ARGS`` in-process; fails on any exception but SystemExit."""
    result = CliRunner().invoke(main, ["plot", *map(str, args)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        pytest.fail("plot raised:\n" + "".join(traceback.format_exception(*result.exc_info)))  # type: ignore[misc]
    assert "Traceback" not in result.stderr
    return result.exit_code, result.stdout, result.stderr


def one_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.parametrize("kind,suffix,magic", [
    ("timeseq", "png", b"\x89PNG"), ("cwnd", "svg", b"<?xml"), ("rtd", "pdf", b"%PDF"), ("bursts", "png", b"\x89PNG"),
    ("throughput", "png", b"\x89PNG"),
])
def test_each_kind_writes_its_format(tmp_path, kind, suffix, magic):
    out = tmp_path / f"{kind}.{suffix}"
    extra = ["--truth", SACK / "truth.json"] if kind in ("timeseq", "cwnd") else []
    code, _, err = plot(SACK / "sender.pcap", "--kind", kind, *extra, "-o", out)
    assert code == 0, err
    assert out.read_bytes().startswith(magic)


def test_several_captures_on_one_figure(tmp_path):
    out = tmp_path / "rtd.png"
    code, _, err = plot(SACK / "sender.pcap", THIN, "--kind", "rtd", "-o", out)
    assert code == 0, err
    assert out.read_bytes().startswith(b"\x89PNG")
    code, _, err = plot(SACK / "sender.pcap", THIN, "--kind", "timeseq", "-o", tmp_path / "t.png")
    assert code == 2 and "draws one capture" in one_error(err)


@pytest.mark.parametrize("args,status,words", [
    (["--conn", "5"], 2, "no connection 5 (the capture has connections 0-0)"),
    (["--conn", "0", "--dir", "b2a"], 2, "no data sent in b2a of connection 0"),
    (["--from", "500", "--to", "600"], 2, "no packets from 500 s to 600 s"),
    (["--around-loss", "99"], 2, "no loss incident 99"),
    (["--around-loss", "1", "--from", "1"], 2, "--around-loss applies to timeseq only"),
    (["--truth", "/nonexistent/truth.json"], 1, "cannot read the truth file"),
])
def test_bad_choices_give_one_error_line(tmp_path, args, status, words):
    out = tmp_path / "t.png"
    code, _, err = plot(THIN, "--kind", "timeseq", *args, "-o", out)
    assert code == status
    assert words in one_error(err)
    assert not out.exists()


def test_output_paths_are_checked(tmp_path):
    code, _, err = plot(THIN, "--kind", "timeseq", "-o", "/nonexistent/dir/t.png")
    assert code == 1 and "cannot write there" in one_error(err)
    existing = tmp_path / "t.png"
    existing.write_bytes(b"keep me")
    code, _, err = plot(THIN, "--kind", "timeseq", "-o", existing)
    assert code == 2 and "exists (use --force to overwrite)" in one_error(err)
    assert existing.read_bytes() == b"keep me"
    code, _, err = plot(THIN, "--kind", "timeseq", "-o", existing, "--force")
    assert code == 0, err
    assert existing.read_bytes().startswith(b"\x89PNG")
    code, _, err = plot(THIN, "--kind", "timeseq", "-o", tmp_path / "t.gif")
    assert code == 2 and "unknown output format '.gif'" in one_error(err)
    code, _, err = plot(THIN, "--kind", "rtd", "-o", tmp_path / "r.html")
    assert code == 2 and "only timeseq has an interactive" in one_error(err)


def test_unreadable_capture_and_no_data(tmp_path):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture at all")
    code, _, err = plot(bad, "--kind", "rtd", "-o", tmp_path / "r.png")
    assert code == 1 and str(bad) in one_error(err)
    code, _, err = plot(HTTP, "--kind", "bursts", "--conn", "0", "-o", tmp_path / "b.png")
    assert code == 2 and "no lost transmissions" in one_error(err)


def test_help_does_not_import_matplotlib():
    code = (
        "import sys\n"
        "from tcpsack_analyze.cli import main\n"
        "try:\n    main(['plot', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in ('matplotlib', 'plotly', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "--around-loss K" in out and "LOADED []" in out


# --------------------------------------------------------------------------- interactive page


def test_html_page_is_self_contained_with_an_incident_list(tmp_path):
    out = tmp_path / "t.html"
    code, _, err = plot(SACK / "sender.pcap", "--kind", "timeseq", "--truth", SACK / "truth.json", "-o", out)
    assert code == 0, err
    page = out.read_text()
    assert "<script src=" not in page and "Plotly.newPlot" in page  # plotly.js is inside the page
    assert page.count('class="incident"') == 39  # the capture's 39 loss incidents
    assert "Loss incidents (39)" in page
    # a range lists the incidents that begin in it; --around-loss opens on one, the rest still drawn
    code, _, err = plot(SACK / "sender.pcap", "--kind", "timeseq", "--from", "2", "--to", "3", "-o", tmp_path / "r.html")
    assert code == 0, err
    assert 0 < (tmp_path / "r.html").read_text().count('class="incident"') < 39
    code, _, err = plot(SACK / "sender.pcap", "--kind", "timeseq", "--around-loss", "5", "-o", tmp_path / "a.html")
    assert code == 0, err
    assert (tmp_path / "a.html").read_text().count('class="incident"') == 39
    code, _, err = plot(SACK / "sender.pcap", "--kind", "timeseq", "--around-loss", "99", "-o", tmp_path / "b.html")
    assert code == 2 and "no loss incident 99" in one_error(err)


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.mark.skipif(_chromium() is None, reason="needs chromium and chromedriver (Debian: chromium chromium-driver)")
def test_clicking_an_incident_zooms_the_graph(tmp_path):
    pytest.importorskip("selenium", reason="needs selenium (the test extra)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out = tmp_path / "t.html"
    assert plot(THIN, "--kind", "timeseq", "-o", out)[0] == 0
    browser, driver = _chromium()  # type: ignore[misc]
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-quic", f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}",
                "--window-size=1400,800"):
        options.add_argument(arg)
    web = webdriver.Chrome(service=Service(driver), options=options)
    x_range = "return document.getElementById('timeseq').layout.xaxis.range"
    try:
        web.get(out.as_uri())
        WebDriverWait(web, 30).until(lambda w: w.execute_script("return !!(document.getElementById('timeseq').layout)"))
        before = web.execute_script(x_range)
        link = web.find_element(By.ID, "incident-2")
        link.click()
        WebDriverWait(web, 30).until(lambda w: w.execute_script(x_range) != before)
        after = web.execute_script(x_range)
        assert after[1] - after[0] < (before[1] - before[0]) / 10  # zoomed in
        assert "current" in link.get_attribute("class")
        web.save_screenshot(str(tmp_path / "after.png"))
    finally:
        web.quit()
    # the view is the incident's close-up: it holds the incident's first transmission
    from tcpsack_analyze.plots import load

    d = load(str(THIN)).busiest()
    inc = d.loss.incidents[2]
    assert after[0] <= d.seconds(inc.first_ns) <= after[1]
